// SPDX-License-Identifier: Apache-2.0
// simulateGate (lib/plan/budget/pipeline-sim.ts): a worked example, and properties on seeded random
// plan-shaped schedules: the makespan is at least the compute and at least the reads the last op
// waits for, equals the compute when reads take no time, and never falls when any op or load gets slower.
// And pinPrefixPlanner (lib/plan/memory/preload-plan.ts): every prefix it plans is a valid plan with exactly
// that prefix pinned.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { int, randomSchedule } from '../helpers/pipeline-schedules.js'
import { simulateGate } from '../../lib/plan/budget/pipeline-sim.js'
import { pinPrefixPlanner, planPreload } from '../../lib/plan/memory/preload-plan.js'
import type { PipelineSchedule } from '../../lib/plan/budget/pipeline-edges.js'
import { randomProblem, staticViolations } from '../helpers/plan-problems.js'


t.test('worked example: loads stream in order, each after the op that frees its memory', async (t) => {
  // op 0 (2 ms) needs load 0 (3 ms); load 1 (4 ms) waits for op 0 and feeds op 2; op 1 takes 1 ms.
  const s: PipelineSchedule = { ops: 3, loads: [{ step: 0, after: -1 }, { step: 2, after: 0 }] }
  const r = simulateGate(s, [2, 1, 5], [3, 4])
  // load 0: 0-3; op 0: 3-5; op 1: 5-6; load 1: 5-9 (after op 0); op 2: 9-14
  t.same(r, { makespanMs: 14, computeMs: 8, readMs: 7, computeWaitMs: 3 + 3, loadWaitMs: 2 })
})

t.test('random schedules: bounds, zero-cost reads, and monotone in every duration', async (t) => {
  const rand = seededRandom(2027)
  const failures: string[] = []
  let withLoads = 0
  for (let i = 0; i < 400; i++) {
    const s = randomSchedule(rand, 20, 15)
    const ops = Array.from({ length: s.ops }, () => rand() * 3)
    const loads = s.loads.map(() => rand() * 4)
    const r = simulateGate(s, ops, loads)
    const what = `case ${i}: ${JSON.stringify(s)}`
    const bad: string[] = []
    const compute = ops.reduce((a, b) => a + b, 0)
    if (Math.abs(r.computeMs - compute) > 1e-9) bad.push(`computeMs ${r.computeMs} != ${compute}`)
    if (r.makespanMs < compute - 1e-9) bad.push(`makespan ${r.makespanMs} < compute ${compute}`)
    // every load the last op needs is read, one after another, before it runs
    const needed = s.loads.reduce((a, l, j) => (l.step <= s.ops - 1 ? Math.max(a, j + 1) : a), 0)
    const serial = loads.slice(0, needed).reduce((a, b) => a + b, 0) + ops[s.ops - 1]!
    if (r.makespanMs < serial - 1e-9) bad.push(`makespan ${r.makespanMs} < reads before the last op ${serial}`)
    const free = simulateGate(s, ops, loads.map(() => 0))
    if (Math.abs(free.makespanMs - compute) > 1e-9) bad.push(`with instant reads ${free.makespanMs} != compute ${compute}`)
    if (s.loads.length > 0) {
      withLoads++
      const j = int(rand, 0, s.loads.length - 1)
      const slower = loads.slice()
      slower[j] = slower[j]! + rand() * 2
      if (simulateGate(s, ops, slower).makespanMs < r.makespanMs - 1e-9) bad.push(`a slower load ${j} made it faster`)
    }
    const k = int(rand, 0, s.ops - 1)
    const slowOp = ops.slice()
    slowOp[k] = slowOp[k]! + rand() * 2
    if (simulateGate(s, slowOp, loads).makespanMs < r.makespanMs - 1e-9) bad.push(`a slower op ${k} made it faster`)
    if (bad.length > 0) failures.push(`${what}: ${bad.join('; ')}`)
  }
  t.same(failures, [], '400 random schedules, none breaking a property')
  t.ok(withLoads > 300, `${withLoads} of them with loads`)
})

t.test('pinPrefixPlanner: each prefix plan pins exactly that prefix, fits, and agrees with planPreload on the largest', async (t) => {
  const rand = seededRandom(99)
  let planned = 0
  for (let i = 0; i < 60; i++) {
    const problem = randomProblem(1000 + i)
    const total = problem.tensors.reduce((a, x) => a + Math.ceil(x.bytes / 4096) * 4096, 0)
    const budget = Math.max(4096, Math.round(total * (0.4 + rand() * 0.8)))
    let largest
    try {
      largest = planPreload(problem, { budget })
    } catch {
      continue
    }
    const planner = pinPrefixPlanner(problem, { budget })
    t.same(planner.largest().placements, largest.placements, `case ${i}: largest() is planPreload's plan`)
    for (const k of [0, 1, Math.floor(problem.steps / 2), problem.steps]) {
      const plan = planner.withPrefix(k)
      if (plan === undefined) continue
      planned++
      const bad = staticViolations(problem, plan, budget)
      problem.tensors.forEach((x, j) => {
        const pinned = plan.placements[j]!.pinned
        const should = x.kind === 'weight' && x.first < k
        if (pinned !== should) bad.push(`tensor ${j} (${x.kind}, first ${x.first}) pinned ${pinned}`)
      })
      if (bad.length > 0) t.fail(`case ${i}, prefix ${k}: ${bad.join('; ')}`)
    }
  }
  t.ok(planned > 60, `${planned} prefix plans checked`)
})
