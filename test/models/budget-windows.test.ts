// SPDX-License-Identifier: Apache-2.0
// Weight windows and pins chosen together (lib/plan/budget/plan-budget.ts narrowerWindows): on a model
// whose largest weight is most of the budget, as VGG-19's fc6 is, the seed's fewest slices leave little
// to pin; the planner then cuts that weight finer and pins the others. The plan with narrower windows is
// taken only when the simulation says it is clearly faster, reads less, fits the budget, and computes
// what onnxruntime computes.
import t from 'tap'
import { openPackage, prepare } from '../../lib/index.js'
import { planForBudget, narrowerWindowGain, unavoidableReads, type BudgetModel, type BudgetPlan, type PlanPolicy } from '../../lib/plan/budget/plan-budget.js'
import { opTimes, planSchedule, planTimes } from '../../lib/plan/budget/plan-times.js'
import { tempDir } from '../helpers/budget.js'
import { compareTensors } from '../helpers/compare.js'
import { mlpModel, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { runOrt } from '../helpers/ort.js'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const weights = seededWeights(57)


const reads = (p: BudgetPlan): number => planSchedule(p.build, p.plan).loads.reduce((n, l) => n + (l.bytes ?? 0), 0)

t.test('a weight most of the budget is cut finer when pinning the rest is clearly faster', async (t) => {
  const dir = tempDir(t)
  const model = join(dir, 'mlp.onnx')
  writeFileSync(model, mlpModel(weights, 8192, 0.02))
  const pkg = join(dir, 'mlp.fpk')
  await prepare(model, pkg, { threads: 2 })
  const feeds = { x: seededInput([1, 512], 9) }
  const want = await runOrt(model, feeds)
  // 24 MB: the 16 MB weights stream through windows of their whole size when cut the fewest times
  const budget = 24e6
  const engine = await openPackage(pkg, { threads: 2, memoryBudget: budget })
  const { model: m, policy } = engine as unknown as { model: BudgetModel; policy: PlanPolicy }
  const ms = (p: BudgetPlan): number => planTimes(m.profile!, p.build, p.plan, opTimes(m.layers, m.profile!, p.build, p.choices)).makespanMs
  // the engine plans its arena: the budget less its bookkeeping
  const arena = budget - engine.stats().reservedBytes
  const seedPlan = planForBudget(m, arena, { ...policy, narrowWindows: false })
  const plan = planForBudget(m, arena, policy)
  const slices = (p: BudgetPlan): number[] => p.choices.map((c) => c.weightSlices)
  t.ok(slices(plan).some((n, i) => n > slices(seedPlan)[i]!), `a weight is cut finer (${slices(plan)} against ${slices(seedPlan)})`)
  t.ok(ms(plan) < narrowerWindowGain * ms(seedPlan), `simulated ${ms(plan).toFixed(2)} ms against ${ms(seedPlan).toFixed(2)}`)
  t.ok(reads(plan) < reads(seedPlan), `reads ${reads(plan)} bytes per inference against ${reads(seedPlan)}`)
  t.ok(plan.plan.placements.some((p) => p.pinned), 'weights are pinned')
  const got = await engine.infer(feeds)
  const stats = engine.stats()
  await engine.close()
  t.ok(stats.arenaBytes + stats.reservedBytes + stats.residentBytes <= budget, `the engine stays within its budget (${stats.arenaBytes} arena bytes)`)
  t.equal(stats.loadBytesPerInference, reads(plan), 'and runs that plan')
  const r = compareTensors(got.y!, want.y!, 1e-4, 1e-4)
  t.ok(r.ok, `outputs at ${budget} bytes: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
})

t.test('unavoidableReads bounds every plan\'s reads from below, and is 0 once the region holds every weight', async (t) => {
  const dir = tempDir(t)
  const model = join(dir, 'mlp.onnx')
  writeFileSync(model, mlpModel(weights, 8192, 0.02))
  const pkg = join(dir, 'mlp.fpk')
  const report = await prepare(model, pkg, { threads: 2 })
  const engine = await openPackage(pkg, { threads: 2 })
  const { model: m, policy } = engine as unknown as { model: BudgetModel; policy: PlanPolicy }
  const reserve = engine.stats().reservedBytes
  await engine.close()
  let tight = 0
  for (const budget of [report.minimumBudget, 20e6, 24e6, 28e6, 32e6, 40e6, 48e6]) {
    if (budget < report.minimumBudget) continue
    const arena = budget - reserve
    for (const narrowWindows of [false, true]) {
      const p = planForBudget(m, arena, { ...policy, narrowWindows })
      const bound = unavoidableReads(m, arena - p.build.residentBytes)
      t.ok(reads(p) >= bound, `${(budget / 1e6).toFixed(1)} MB, windows ${narrowWindows}: reads ${reads(p)} >= bound ${bound}`)
      if (bound > 0 && reads(p) < bound * 1.5) tight++
    }
  }
  t.ok(tight > 0, 'the bound is within 1.5x of a real plan\'s reads at some budget (it is not vacuous)')
  t.equal(unavoidableReads(m, 1e12), 0, 'a region holding everything leaves nothing to read')
})
