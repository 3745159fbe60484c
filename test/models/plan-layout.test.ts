// SPDX-License-Identifier: Apache-2.0
// The memory layout a planner puts into its ExecutionPlan (`buffers`) is the one its program and load
// queue use, on real models: ONNX models (aliases, Concats in place, residual adds) and a memory-budget
// package with every weight resident and at its minimum budget (weights loaded during each inference). The picture draws exactly that layout; the trace of a profiled run is a valid trace
// of that run. (Elastic plans: test/elastic/plan-layout-elastic.test.ts.)
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { open, openPackage, prepare, tensor, type Tensor } from '../../lib/index.js'
import { bufferOffset, type ExecutionPlan } from '../../lib/plan/execution-plan.js'
import { planSvg } from '../../lib/plan/draw/plan-svg.js'
import { runTrace } from '../../lib/runtime/run-trace.js'
import type { EngineBase } from '../../lib/runtime/engine-base.js'
import { tempDir, threads } from '../helpers/budget.js'
import { fixtures, randomFloat, randomInt64 } from '../helpers/data.js'
import { checkLayout, checkPicture, checkTrace } from '../helpers/plan-checks.js'

const model = (name: string): string => join(fixtures, 'models', name)

/** Plans, draws and traces `engine` on `feeds`; returns the plan. */
async function planDrawTrace(t: Test, engine: EngineBase, feeds: Record<string, Tensor>, what: string, budgetBytes?: number): Promise<ExecutionPlan> {
  const plan = await engine.executionPlan(feeds)
  checkLayout(t, plan, what)
  checkPicture(t, planSvg(plan, { model: what, kind: engine.kind, ...(budgetBytes === undefined ? {} : { budgetBytes }) }), plan, what)
  const { run } = await engine.inferTraced(feeds)
  t.equal(run.plan, plan, `${what}: the traced inference ran the plan drawn`)
  const loads = run.report.loads
  let nonEmpty = 0
  for (let j = 1; j < (loads?.ranges.length ?? 0); j += 3) if (loads!.ranges[j]! > 0) nonEmpty++
  checkTrace(t, runTrace(run.plan, run.report, what), plan, nonEmpty, what)
  return plan
}

t.test('ONNX models: constants resident, activations where the program reads and writes them', async (t) => {
  const cases: Array<[string, Record<string, Tensor>]> = [
    ['squeezenet_small.onnx', { input: randomFloat([1, 3, 100, 100], 1) }],
    ['resnet_small.onnx', { input: randomFloat([1, 3, 64, 64], 2) }],
    ['bert_tiny.onnx', { input_ids: randomInt64([1, 8], 3, 100), attention_mask: tensor('int64', [1, 8], new BigInt64Array(8).fill(1n)) }],
  ]
  for (const [name, feeds] of cases) {
    const engine = await open(model(name), { threads })
    try {
      const plan = await planDrawTrace(t, engine, feeds, name)
      const kinds = new Set(plan.buffers.map((b) => b.kind))
      t.ok(kinds.has('resident') && kinds.has('activation') && !kinds.has('loaded'), `${name}: ${[...kinds].join(', ')}`)
      const constants = plan.regions.find((r) => r.name === 'constants')!
      t.ok(plan.buffers.filter((b) => b.kind === 'resident').every((b) => b.from === 0 && b.to === plan.opNodes.length - 1 && bufferOffset(plan, b) + b.bytes <= constants.bytes), `${name}: constants stay for the whole run, in their region`)
    } finally {
      await engine.close()
    }
  }
})

t.test('a memory-budget package: weights pinned without a budget, loaded during each inference at its minimum', async (t) => {
  const dir = tempDir(t)
  const onnx = join(dir, 'vgg.onnx')
  copyFileSync(model('vgg_small.onnx'), onnx)
  const report = await prepare(onnx, join(dir, 'vgg.fpk'), { dims: { batch: 1 }, threads })
  const feeds = { input: randomFloat([1, 3, 112, 112], 4) }
  for (const budget of [undefined, report.minimumBudget]) {
    const engine = await openPackage(join(dir, 'vgg.fpk'), { threads, ...(budget === undefined ? {} : { memoryBudget: budget }) })
    try {
      const what = `vgg.fpk at ${budget ?? 'no'} budget`
      const plan = await planDrawTrace(t, engine, feeds, what, budget)
      const region = (name: string) => plan.regions.find((r) => r.name === name)!
      const within = (kind: string, name: string): boolean =>
        plan.buffers.filter((b) => b.kind === kind).every((b) => b.offset >= region(name).offset && b.offset + b.bytes <= region(name).offset + region(name).bytes)
      t.ok(within('pinned', 'pinned') && within('loaded', 'planned') && within('activation', 'planned'), `${what}: weights and activations in their regions`)
      const loaded = plan.buffers.filter((b) => b.kind === 'loaded')
      t.equal(loaded.length, plan.loads?.after.length ?? 0, `${what}: a loaded buffer per load of the queue (${loaded.length})`)
      if (budget === undefined) t.equal(loaded.length, 0, 'every weight pinned')
      else t.ok(loaded.length > 0, `${loaded.length} weights loaded during each inference`)
    } finally {
      await engine.close()
    }
  }
})
