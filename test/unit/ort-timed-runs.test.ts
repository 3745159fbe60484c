// SPDX-License-Identifier: Apache-2.0
// bench/models/op-profile.ts ortTimedRuns: profile.ts runs onnxruntime twice per timed run (an untimed
// run after each pause, then the timed one), so only every second model run of its trace counts.
import t from 'tap'
import { ortTimedRuns, type OrtTraceEvent } from '../../bench/models/op-profile.js'

const run = (ts: number, dur: number): OrtTraceEvent => ({ cat: 'Session', name: 'model_run', ts, dur })
const node = (name: string, ts: number, dur: number, op = 'Conv'): OrtTraceEvent => ({ cat: 'Node', name: `${name}_kernel_time`, ts, dur, args: { op_name: op } })

// Warm-up at 0, then pairs (untimed, timed) at 100/200 and 300/400; each run has one Conv node whose
// time tells the runs apart, and a non-kernel event that must be ignored.
const events: OrtTraceEvent[] = [
  run(400, 50), node('c', 410, 4000), { cat: 'Node', name: 'c_fence_before', ts: 405, dur: 1 },
  run(0, 50), node('c', 10, 1000),
  run(100, 50), node('c', 110, 2000),
  run(200, 50), node('c', 210, 3000),
  run(300, 50), node('c', 310, 5000),
]

t.test('every = 2 keeps the second run of each of the last pairs, in time order', async (t) => {
  const { wall, ops } = ortTimedRuns(events, 2, 2)
  t.same(wall, [0.05, 0.05])
  t.same(ops, [[{ node: 'c', opType: 'Conv', ms: 3 }], [{ node: 'c', opType: 'Conv', ms: 4 }]])
})

t.test('every = 1 keeps the last runs', async (t) => {
  t.same(ortTimedRuns(events, 3).ops.map((r) => r[0]!.ms), [3, 5, 4])
})
