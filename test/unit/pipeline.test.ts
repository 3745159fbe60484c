// SPDX-License-Identifier: Apache-2.0
// The pipeline edges (lib/plan/budget/pipeline-edges.ts) on seeded random schedules of the shape the memory
// plan produces (loads in queue order with non-decreasing steps, each waiting for an op before its step):
// need is the prefix of loads each op waits for, and such schedules never make a load wait for an op that
// waits for it. The native lanes' waits on these edges are tested in test/native/session-pipeline.test.ts.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { int, randomSchedule } from '../helpers/pipeline-schedules.js'
import { loadsNeeded, pipelineEdges, type PipelineSchedule } from '../../lib/plan/budget/pipeline-edges.js'

const seed = 7331

t.test('random plan-shaped schedules: need is the smallest prefix covering each op, and no edge closes a cycle', async (t) => {
  const rand = seededRandom(seed)
  const failures: string[] = []
  let edges = 0
  for (let i = 0; i < 500; i++) {
    const s = randomSchedule(rand, 14, 12)
    const { after, need } = pipelineEdges(s)
    const show = `case ${i}: ops ${s.ops}, loads ${JSON.stringify(s.loads)}`
    const bad: string[] = []
    if (need.length !== s.ops) bad.push(`need has ${need.length} entries`)
    for (let k = 0; k < s.ops; k++) {
      // the smallest prefix holding every load op k (or an earlier op) reads
      let want = 0
      s.loads.forEach((l, j) => {
        if (l.step <= k) want = Math.max(want, j + 1)
      })
      if (need[k] !== want) bad.push(`need[${k}] = ${need[k]}, expected ${want}`)
    }
    s.loads.forEach((l, j) => {
      if (l.after >= 0) edges++
      if (after[j] !== l.after) bad.push(`after[${j}] = ${after[j]}`)
      if (l.after >= 0 && need[l.after]! > j) bad.push(`load ${j} waits for op ${l.after}, which needs ${need[l.after]}`)
    })
    if (bad.length > 0) failures.push(`${show}: ${bad.join('; ')}`)
  }
  t.same(failures, [], '500 random schedules, none breaking a rule')
  t.ok(edges > 1000, `${edges} load-after-op edges among them`)
})

t.test('loadsNeeded counts, per op, the prefix of loads it needs', async (t) => {
  const need = loadsNeeded({ ops: 5, loads: [{ step: 1, after: -1 }, { step: 1, after: 0 }, { step: 3, after: 1 }] })
  t.same(Array.from(need), [0, 2, 2, 3, 3, 3])
  t.same(pipelineEdges({ ops: 3, loads: [] }), { after: new Int32Array(0), need: new Int32Array(3) }, 'no loads: nothing to wait for')
})

t.test('a load waiting for an op at or after its own step, or for an op that needs it, throws', async (t) => {
  for (const bad of [{ step: 2, after: 2 }, { step: 1, after: 3 }]) {
    const s: PipelineSchedule = { ops: 4, loads: [{ step: 0, after: -1 }, bad] }
    t.throws(() => loadsNeeded(s), { message: /pipeline: load 1 waits for op \d but op \d reads it/ })
    t.throws(() => pipelineEdges(s), { message: /pipeline: load 1 waits for op \d but op \d reads it/ })
  }
  // queue order against step order: load 0 (read by op 2) waits for op 1, which reads load 1
  t.throws(() => pipelineEdges({ ops: 3, loads: [{ step: 2, after: 1 }, { step: 1, after: -1 }] }), { message: /load 0 waits for op 1, which needs 2 loads/ })
})
