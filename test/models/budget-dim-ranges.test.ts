// SPDX-License-Identifier: Apache-2.0
// Memory-budgeted packages prepared for dim ranges (issue 37): `prepare --dim batch=1..6` keeps the dim
// symbolic, the engine plans once at the range's ceiling inside the budget, and every value of the range
// runs on that plan. Checked on real models against onnxruntime-node at every value, in a shuffled order,
// at the package's minimum budget (weights loaded per inference), with the arena the size it had at
// open; then the typed errors for a value outside the range, a budget too small for the range and a
// damaged range in the manifest.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { BudgetedEngine, openPackage, type Tensor } from '../../lib/index.js'
import { PackageReader } from '../../lib/package/reader.js'
import { rewritePackageMeta } from '../../lib/package/rewrite-meta.js'
import { prepare, type PrepareOptions } from '../../lib/prepare/prepare.js'
import { tempDir, threads } from '../helpers/budget.js'
import { compareTensors, maxAbs } from '../helpers/compare.js'
import { fixtures, ocrAssets, randomFloat, repoRoot, shuffled } from '../helpers/data.js'
import { runOrt } from '../helpers/ort.js'

const fixtureModel = (name: string): string => join(fixtures, 'models', name)

function tokens(seq: number, seed: number): Record<string, Tensor> {
  const ids = new BigInt64Array(seq)
  for (let i = 0; i < seq; i++) ids[i] = BigInt(1 + ((i * 7919 + seed * 104729) % 490))
  const mask = new BigInt64Array(seq).fill(1n)
  if (seq > 2) mask[seq - 1] = 0n // a padded last token
  return { input_ids: { dtype: 'int64', dims: [1, seq], data: ids }, attention_mask: { dtype: 'int64', dims: [1, seq], data: mask } }
}

async function sameAsOrt(t: Test, model: string, feeds: Record<string, Tensor>, got: Record<string, Tensor>, what: string): Promise<void> {
  const want = await runOrt(model, feeds, 1)
  for (const [name, w] of Object.entries(want)) {
    const atol = 1e-4 * maxAbs(w) + 1e-5
    const r = compareTensors(got[name]!, w, atol, 0)
    t.ok(r.ok, `${what}: ${name} [${w.dims.join(', ')}] max |diff| ${r.maxAbsDiff.toExponential(2)} <= ${atol.toExponential(2)}${r.reason ? ` (${r.reason})` : ''}`)
  }
}

/**
 * Prepares `model` for `dims` and opens it at its minimum budget; with `templates: false`, every shape
 * gets the exact build (the path a plan whose template fails its probes takes).
 */
async function atMinimum(t: Test, model: string, dims: PrepareOptions['dims'], profile = true, templates = true): Promise<{ engine: BudgetedEngine; path: string; minimum: number; unlimited: number }> {
  const path = join(tempDir(t), 'model.fpk')
  const report = await prepare(model, path, { dims, threads, profile })
  const engine = await BudgetedEngine.open(path, { threads, memoryBudget: report.minimumBudget }, { shapeTemplates: templates })
  t.teardown(() => engine.close())
  t.equal(engine.stats().dims?.templated, templates, templates ? 'shapes run from the plan\'s template (it passed its probes)' : 'shapes get exact builds')
  return { engine, path, minimum: report.minimumBudget, unlimited: report.unlimitedBudget }
}

/** Runs every value in shuffled order against onnxruntime; the arena stays as it was at open. */
async function everyValue(t: Test, engine: BudgetedEngine, model: string, values: readonly number[], feedsAt: (v: number) => Record<string, Tensor>, dim: string): Promise<void> {
  const atOpen = engine.stats()
  t.ok(atOpen.arenaBytes <= engine.memoryBudget, `arena ${atOpen.arenaBytes} <= budget ${engine.memoryBudget}`)
  t.ok(atOpen.loadBytesPerInference > 0, `at the minimum budget weights are loaded per inference (${atOpen.loadBytesPerInference} bytes)`)
  for (const v of shuffled(values)) {
    const feeds = feedsAt(v)
    await sameAsOrt(t, model, feeds, await engine.infer(feeds), `${dim} = ${v}`)
  }
  const after = engine.stats()
  t.equal(after.arenaBytes, atOpen.arenaBytes, `the arena stays ${atOpen.arenaBytes} bytes over ${values.length} shapes`)
  t.equal(after.dims?.shapePrograms, Math.min(16, values.length - 1), 'one program per shape below the ceiling is kept')
}

t.test('a CNN prepared for batch 1..6 runs every batch at its minimum budget with onnxruntime-node\'s outputs', async (t) => {
  const model = fixtureModel('resnet_small.onnx')
  const { engine } = await atMinimum(t, model, { batch: [1, 6] })
  t.same(engine.inputs[0]!.dims, ['batch', 3, 64, 64], 'the input keeps its symbolic dim')
  t.same(engine.stats().dims?.ranges, { batch: [1, 6] })
  await everyValue(t, engine, model, [1, 2, 3, 4, 5, 6], (b) => ({ input: randomFloat([b, 3, 64, 64], b) }), 'batch')
})

t.test('without the template (exact builds per shape), the CNN and BERT (tiny) give the same outputs', async (t) => {
  const cnn = fixtureModel('resnet_small.onnx')
  const a = await atMinimum(t, cnn, { batch: [1, 4] }, false, false)
  await everyValue(t, a.engine, cnn, [1, 2, 3, 4], (b) => ({ input: randomFloat([b, 3, 64, 64], 10 + b) }), 'batch')
  const bert = fixtureModel('bert_tiny.onnx')
  const b = await atMinimum(t, bert, { batch: 1, seq_len: [1, 12] }, false, false)
  await everyValue(t, b.engine, bert, Array.from({ length: 12 }, (_, i) => i + 1), (n) => tokens(n, 50 + n), 'seq_len')
})

t.test('BERT (tiny) prepared for seq_len 1..40 runs every length at its minimum budget with onnxruntime-node\'s outputs, before and after a budget change', async (t) => {
  const model = fixtureModel('bert_tiny.onnx')
  const { engine, minimum, unlimited } = await atMinimum(t, model, { batch: 1, seq_len: [1, 40] })
  t.same(engine.inputs.map((i) => i.dims), [[1, 'seq_len'], [1, 'seq_len']])
  const lengths = Array.from({ length: 40 }, (_, i) => i + 1)
  await everyValue(t, engine, model, lengths, (n) => tokens(n, n), 'seq_len')
  await engine.setMemoryBudget(Math.round((minimum + unlimited) / 2))
  t.equal(engine.stats().dims?.shapePrograms, 0, 'a new plan drops the programs of the old one')
  for (const n of [40, 7, 23, 1]) await sameAsOrt(t, model, tokens(n, 100 + n), await engine.infer(tokens(n, 100 + n)), `after the change, seq_len = ${n}`)
})

t.test('PP-OCRv4 rec prepared for widths 80..400 runs every width at its minimum budget with onnxruntime-node\'s outputs', async (t) => {
  const model = join(ocrAssets, 'ch_PP-OCRv4_rec_infer.onnx')
  const w = 'p2o.DynamicDimension.1'
  const { engine } = await atMinimum(t, model, { 'p2o.DynamicDimension.0': 1, [w]: [80, 400] }, false)
  await everyValue(t, engine, model, [80, 100, 160, 240, 320, 400], (width) => ({ x: randomFloat([1, 3, 48, width], width) }), 'width')
})

t.test('a budget below the range\'s minimum plans the largest bucket that fits; larger values are refused until the budget grows', async (t) => {
  const model = fixtureModel('resnet_small.onnx')
  const path = join(tempDir(t), 'cnn.fpk')
  const report = await prepare(model, path, { dims: { batch: [1, 64] }, threads, profile: false })
  const engine = await openPackage(path, { threads, memoryBudget: Math.round(0.9 * report.minimumBudget) })
  t.teardown(() => engine.close())
  const served = engine.stats().dims!.served.batch!
  t.ok(served >= 1 && served < 64, `the budget holds the plan up to batch ${served}, below the range's top 64`)
  t.ok(engine.stats().arenaBytes <= engine.memoryBudget, 'the arena fits the budget')
  const images = (b: number): Record<string, Tensor> => ({ input: randomFloat([b, 3, 64, 64], 200 + b) })
  for (const b of [...new Set([1, served])]) await sameAsOrt(t, model, images(b), await engine.infer(images(b)), `batch ${b} at the smaller budget`)
  await t.rejects(engine.infer(images(served + 1)), {
    name: 'MemoryBudgetError',
    code: 'ERR_FLEXPIPE_BUDGET',
    minimumBudget: report.minimumBudget,
    message: new RegExp(`'batch' is ${served + 1}, but the memory budget of \\d+ bytes holds this package's plan only up to batch = ${served} \\(its range is 1\\.\\.64\\); give at least ${report.minimumBudget} bytes to run every batch up to 64`),
  })
  await engine.setMemoryBudget(report.minimumBudget)
  t.equal(engine.stats().dims!.served.batch, 64, 'at the minimum the plan serves the whole range')
  for (const b of [served + 1, 64]) await sameAsOrt(t, model, images(b), await engine.infer(images(b)), `batch ${b} after the budget grew`)
})

t.test('a value outside the range, a budget below the range\'s minimum and a damaged range are typed errors that say what to do', async (t) => {
  const model = fixtureModel('bert_tiny.onnx')
  const dir = tempDir(t)
  const path = join(dir, 'bert.fpk')
  const report = await prepare(model, path, { dims: { batch: 1, seq_len: [4, 32] }, threads, profile: false })
  const engine = await openPackage(path, { threads })
  t.teardown(() => engine.close())
  await t.rejects(engine.infer(tokens(33, 1)), { name: 'ShapeError', code: 'ERR_FLEXPIPE_SHAPE', message: /input 'input_ids' dim 1: 'seq_len' is 33, outside the range 4\.\.32 this package was prepared for; prepare it with --dim seq_len=4\.\.33/ })
  await t.rejects(engine.infer(tokens(3, 1)), { name: 'ShapeError', message: /'seq_len' is 3, outside the range 4\.\.32.*--dim seq_len=3\.\.32/ })
  await sameAsOrt(t, model, tokens(4, 2), await engine.infer(tokens(4, 2)), 'after the errors, seq_len = 4')
  await t.rejects(openPackage(path, { threads, memoryBudget: Math.floor(report.minimumBudget / 2) }), {
    name: 'MemoryBudgetError',
    code: 'ERR_FLEXPIPE_BUDGET',
    message: /planned for seq_len = 32, the top of its ranges, and no smaller bucket of the range fits either; a package prepared for a narrower range \(--dim seq_len=4\.\.16\) needs less/,
  })
  await t.rejects(prepare(model, join(dir, 'x.fpk'), { dims: { batch: 1 }, threads, profile: false }), { name: 'ArgumentError', message: /symbolic dim 'seq_len': give its value or its range, e\.g\. --dim seq_len=1 or --dim seq_len=1\.\.8/ })
  await t.rejects(prepare(model, join(dir, 'x.fpk'), { dims: { batch: 1, seq_len: [1, 8], width: [1, 2] }, threads, profile: false }), { name: 'ArgumentError', message: /no symbolic input dim 'width'; its symbolic dims are batch, seq_len/ })
  await t.rejects(prepare(model, join(dir, 'x.fpk'), { dims: { batch: 1, seq_len: [9, 8] }, threads, profile: false }), { name: 'ArgumentError', message: /dims\.seq_len: expected \[min, max\] with integers 1 <= min <= max/ })

  const reader = await PackageReader.open(path)
  const meta = reader.manifest.meta
  await reader.close()
  t.same(meta.dims, { seq_len: [4, 32] }, 'the manifest stores the range')
  for (const [label, dims, message] of [
    ['a reversed range', { seq_len: [32, 4] }, /meta\.dims\.seq_len is not a range/],
    ['a dim no input has', { seq_len: [4, 32], width: [1, 2] }, /meta\.dims names 'width', which no input has/],
    ['no range for a symbolic dim', {}, /input dims seq_len are symbolic but have no range in meta\.dims/],
  ] as const) {
    const damaged = join(dir, `damaged-${label.replace(/ /g, '-')}.fpk`)
    await prepare(model, damaged, { dims: { batch: 1, seq_len: [4, 32] }, threads, profile: false })
    await rewritePackageMeta(damaged, { ...meta, dims })
    await t.rejects(openPackage(damaged, { threads }), { name: 'PackageError', code: 'ERR_FLEXPIPE_PACKAGE', message }, label)
  }
})

t.test('flexpipe prepare --dim seq_len=4..32 writes a package for the range', async (t) => {
  const cli = join(repoRoot, 'dist', 'lib', 'cli', 'main.js')
  const out = join(tempDir(t), 'cli.fpk')
  const r = spawnSync(process.execPath, [cli, 'prepare', fixtureModel('bert_tiny.onnx'), '-o', out, '--dim', 'batch=1', '--dim', 'seq_len=4..32', '--threads', String(threads)], { encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  const engine = await openPackage(out, { threads })
  t.teardown(() => engine.close())
  t.same(engine.stats().dims?.ranges, { seq_len: [4, 32] })
  for (const n of [4, 17, 32]) await sameAsOrt(t, fixtureModel('bert_tiny.onnx'), tokens(n, n), await engine.infer(tokens(n, n)), `seq_len = ${n}`)
})
