// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the memory-budget tests: temp dirs, PP-OCR models at small fixed input sizes with
// real image inputs, packages prepared once per process, ONNX-engine reference outputs, comparison.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tap, { type Test } from 'tap'
import { imageTensor, readPpm } from '../../lib/cli/image.js'
import { open, openPackage, tensor, type BudgetStats, type Tensor } from '../../lib/index.js'
import { prepare, type PrepareOptions, type PrepareReport } from '../../lib/prepare/prepare.js'
import { compareTensors, maxAbs } from './compare.js'
import { fixtures, ocrAssets } from './data.js'
import { runOrt } from './ort.js'

/** Threads for every engine and package in these tests (packages record the threads they plan for). */
export const threads = 2

/** A new directory under os.tmpdir(), removed when `t` ends. */
export function tempDir(t: Test, prefix = 'flexpipe-budget-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface OcrModel {
  readonly name: string
  readonly onnx: string
  /** Values of the model's symbolic input dims for the test input. */
  readonly dims: Readonly<Record<string, number>>
  readonly feeds: () => Promise<Record<string, Tensor>>
}

const dyn = (i: number): string => `p2o.DynamicDimension.${i}`
const image = async (file: string): Promise<Tensor> => imageTensor(await readPpm(join(fixtures, 'images', file)))

/** The [1, 3, size, size] window of an image tensor at (top, left): real pixels at a cheaper size. */
function crop(img: Tensor, top: number, left: number, size: number): Tensor {
  const [, c, h, w] = img.dims as [number, number, number, number]
  if (top + size > h || left + size > w) throw new Error(`crop ${size} at (${top}, ${left}) is outside ${h}x${w}`)
  const out = tensor('float32', [1, c, size, size])
  const src = img.data as Float32Array
  const dst = out.data as Float32Array
  for (let ch = 0; ch < c; ch++) {
    for (let y = 0; y < size; y++) {
      const from = ch * h * w + (top + y) * w + left
      dst.set(src.subarray(from, from + size), ch * size * size + y * size)
    }
  }
  return out
}

/** PP-OCR cls and rec at 48x320 (a real text line), det on a 128x128 window of the 640x640 text image. */
export const ocr: Readonly<Record<'cls' | 'rec' | 'det', OcrModel>> = {
  cls: {
    name: 'PP-OCR cls',
    onnx: join(ocrAssets, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'),
    dims: { [dyn(0)]: 1, [dyn(1)]: 48, [dyn(2)]: 320 },
    feeds: async () => ({ x: await image('text_48x320.ppm') }),
  },
  rec: {
    name: 'PP-OCR rec',
    onnx: join(ocrAssets, 'ch_PP-OCRv4_rec_infer.onnx'),
    dims: { [dyn(0)]: 1, [dyn(1)]: 320 },
    feeds: async () => ({ x: await image('text_48x320.ppm') }),
  },
  det: {
    name: 'PP-OCR det',
    onnx: join(ocrAssets, 'ch_PP-OCRv4_det_infer.onnx'),
    dims: { [dyn(0)]: 1, [dyn(1)]: 128, [dyn(2)]: 128 },
    feeds: async () => ({ x: crop(await image('text_640.ppm'), 256, 256, 128) }),
  },
}

export interface Prepared {
  readonly path: string
  readonly report: PrepareReport
}

let cacheDir: string | undefined
const prepared = new Map<string, Promise<Prepared>>()
const references = new Map<string, Promise<Record<string, Tensor>>>()

/**
 * Prepares `model` once per process and option set (later calls share the package; do not modify it:
 * copy it first). The packages live in one temp dir removed when the root test ends.
 */
export function preparedPackage(model: OcrModel, options: Omit<PrepareOptions, 'dims' | 'threads' | 'onProgress'> = {}): Promise<Prepared> {
  const key = `${model.onnx} ${JSON.stringify(options)}`
  let p = prepared.get(key)
  if (p === undefined) {
    cacheDir ??= tempDir(tap, 'flexpipe-prepared-')
    const path = join(cacheDir, `package-${prepared.size}.fpk`)
    p = prepare(model.onnx, path, { ...options, dims: model.dims, threads }).then((report) => ({ path, report }))
    prepared.set(key, p)
  }
  return p
}

/**
 * The ONNX engine's outputs (every weight in memory) for the model's feeds, computed once. Its dims are
 * declared as the single values the package is prepared for, so that its plan is made for exactly that
 * shape (the kernels a shape bucket's ceiling would choose could differ from the package's).
 */
export function onnxOutputs(model: OcrModel): Promise<Record<string, Tensor>> {
  let p = references.get(model.onnx)
  if (p === undefined) {
    p = (async () => {
      const dims = Object.fromEntries(Object.entries(model.dims).map(([k, v]): [string, [number, number]] => [k, [v, v]]))
      const engine = await open(model.onnx, { threads, dims })
      try {
        return await engine.infer(await model.feeds())
      } finally {
        await engine.close()
      }
    })()
    references.set(model.onnx, p)
  }
  return p
}

/**
 * Checks every output against `want`: bit-exact when `exact`, else within the conformance tolerance
 * (max |got - want| <= 1e-4 * max|want| + 1e-5, test/helpers/conformance.ts).
 */
export function checkOutputs(t: Test, got: Record<string, Tensor>, want: Record<string, Tensor>, exact: boolean, what: string): void {
  t.same(Object.keys(got).sort(), Object.keys(want).sort(), `${what}: same output names`)
  for (const [name, w] of Object.entries(want)) {
    const g = got[name]
    if (g === undefined) continue
    t.equal(g.dtype, w.dtype, `${what}: ${name} dtype`)
    const atol = exact ? 0 : 1e-4 * maxAbs(w) + 1e-5
    const r = compareTensors(g, w, atol, 0)
    const bound = exact ? 'bit-exact' : `max |diff| ${r.maxAbsDiff.toExponential(2)} <= ${atol.toExponential(2)}`
    t.ok(r.ok, `${what}: ${name} [${w.dims.join(', ')}] ${bound}${r.reason ? ` (${r.reason})` : ''}`)
  }
}

/**
 * Prepares the model at `onnxPath` into a package (in a temp dir of `t`, 2 threads) and runs `feeds`
 * through it without a budget and at its recorded minimum budget: each run's outputs and stats.
 */
export async function packageRunsAtMinimum(t: Test, onnxPath: string, feeds: Record<string, Tensor>): Promise<{
  blobs: number
  runs: Array<{ budget: number | undefined; outputs: Record<string, Tensor>; stats: BudgetStats }>
}> {
  const dir = tempDir(t)
  const model = join(dir, 'model.onnx')
  const pkg = join(dir, 'model.fpk')
  copyFileSync(onnxPath, model)
  const report = await prepare(model, pkg, { threads: 2 })
  const runs = []
  for (const budget of [undefined, report.minimumBudget]) {
    const engine = await openPackage(pkg, { threads: 2, ...(budget === undefined ? {} : { memoryBudget: budget }) })
    const outputs = await engine.infer(feeds)
    runs.push({ budget, outputs, stats: engine.stats() })
    await engine.close()
  }
  return { blobs: report.blobs, runs }
}

/**
 * Prepares the model `bytes` with slicing and without (the On-Demand package) and checks that the
 * sliced package, which fuses one pair of layers, has one layer fewer and a minimum budget at least
 * `saving` bytes smaller, and that it computes onnxruntime's output `y` unconstrained and at its minimum.
 */
export async function slicedPackageFusesBelowOnDemand(t: Test, bytes: Uint8Array, feeds: Record<string, Tensor>, saving: number): Promise<void> {
  const dir = tempDir(t)
  const model = join(dir, 'model.onnx')
  writeFileSync(model, bytes)
  const want = await runOrt(model, feeds)
  const sliced = await prepare(model, join(dir, 'sliced.fpk'), { threads: 2 })
  const whole = await prepare(model, join(dir, 'whole.fpk'), { threads: 2, slicing: false })
  t.equal(sliced.layers, whole.layers - 1, `the fused package has one layer fewer (${sliced.layers} vs ${whole.layers})`)
  t.ok(sliced.minimumBudget + saving < whole.minimumBudget, `minimum budget ${sliced.minimumBudget} with slicing against ${whole.minimumBudget} without`)
  for (const budget of [undefined, sliced.minimumBudget]) {
    const engine = await openPackage(join(dir, 'sliced.fpk'), { threads: 2, ...(budget === undefined ? {} : { memoryBudget: budget }) })
    const got = await engine.infer(feeds)
    await engine.close()
    const r = compareTensors(got.y!, want.y!, 1e-5, 1e-5)
    t.ok(r.ok, `package at ${budget ?? 'unlimited'} budget: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
  }
}
