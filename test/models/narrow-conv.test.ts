// SPDX-License-Identifier: Apache-2.0
// The narrow GEMM convolution (runtime/conv_narrow.h) in whole graphs: on small planes with long
// reductions the Conv op chooses it, and the plain engine and a memory-budgeted package (whose slicing
// cuts its 16-channel weight panels into channel ranges) compute what onnxruntime computes.
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { open, openPackage, prepare, tensor } from '../../lib/index.js'
import { inferGraph } from '../../lib/model/infer-graph.js'
import type { ValueInfo } from '../../lib/model/ir.js'
import { decodeConvCall } from '../../lib/model/ops/nn-conv.js'
import { parseOnnx } from '../../lib/model/onnx-import.js'
import { foldNative } from '../../lib/runtime/engine.js'
import { tempDir } from '../helpers/budget.js'
import { compareTensors } from '../helpers/compare.js'
import { makeModel, tempFile, type ModelSpec } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

const rand = seededRandom(41)
const weights = (name: string, dims: number[], scale: number) => ({ name, dims, floats: Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => (rand() * 2 - 1) * scale) })
const conv = (x: string, w: string, b: string | undefined, y: string, k: number, stride = 1): ModelSpec['nodes'][number] => ({
  op: 'Conv',
  inputs: b === undefined ? [x, w] : [x, w, b],
  outputs: [y],
  name: `conv_${y}`,
  ints: { kernel_shape: [k, k], pads: Array(4).fill(Math.floor(k / 2)), strides: [stride, stride] },
  int: { group: 1 },
})

/**
 * x [1, 64, 7, 7] -> 3x3 64->256 + Relu = a       (K = 576 over 49 pixels: im2col columns)
 * a -> 1x1 256->272 = h                           (17 panels of 16 channels: an odd count)
 * h -> 1x1 272->256, + a (a fused residual), Relu = c
 * c -> 1x1 stride 2 256->40 = y [1, 40, 4, 4]     (im2col columns; 40 channels end in a partial panel)
 */
function narrowModel(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 64, 7, 7] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('w0', [256, 64, 3, 3], 0.05), weights('b0', [256], 0.3),
      weights('w1', [272, 256, 1, 1], 0.06), weights('b1', [272], 0.3),
      weights('w2', [256, 272, 1, 1], 0.06),
      weights('w3', [40, 256, 1, 1], 0.06), weights('b3', [40], 0.3),
    ],
    nodes: [
      conv('x', 'w0', 'b0', 'a0', 3), { op: 'Relu', inputs: ['a0'], outputs: ['a'] },
      conv('a', 'w1', 'b1', 'h', 1),
      conv('h', 'w2', undefined, 'h2', 1), { op: 'Add', inputs: ['h2', 'a'], outputs: ['s'] }, { op: 'Relu', inputs: ['s'], outputs: ['c'] },
      conv('c', 'w3', 'b3', 'y', 1, 2),
    ],
  })
}

const input = () => {
  const x = tensor('float32', [1, 64, 7, 7])
  const r = seededRandom(9)
  const d = x.data as Float32Array
  for (let i = 0; i < d.length; i++) d[i] = r() * 2 - 1
  return x
}

t.test('every Conv of the model chooses the narrow GEMM', async (t) => {
  const g = parseOnnx(narrowModel(), '.')
  const inputs = new Map<string, ValueInfo>([['x', { dtype: 'float32', dims: [1, 64, 7, 7] }]])
  const steps = inferGraph(g, inputs, { concrete: true, fold: foldNative, foldCache: new Map() }).steps
  const kernels = steps.filter((s) => s.kernel?.op === 'Conv').map((s) => decodeConvCall(s.kernel!, s.inputs[0]!.dims as number[], s.outputs[0]!.dims as number[]).kernel)
  t.same(kernels, ['narrow', 'narrow', 'narrow', 'narrow'])
  t.ok(steps.every((s) => s.kernel?.op !== 'Conv' || s.kernel.prepack?.[0]?.transform === 'conv_narrow_filter'), 'each reads its weight through conv_narrow_filter')
})

t.test('the plain engine and a budgeted package match onnxruntime', async (t) => {
  const path = tempFile('narrow.onnx', narrowModel())
  const feeds = { x: input() }
  const want = await runOrt(path, feeds)
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    const got = await engine.infer(feeds)
    await engine.close()
    const c = compareTensors(got.y!, want.y!, 1e-4, 1e-4)
    t.ok(c.ok, `plain engine, ${threads} threads: max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
  const dir = tempDir(t)
  const pkg = join(dir, 'narrow.fpk')
  copyFileSync(path, join(dir, 'narrow.onnx'))
  const report = await prepare(join(dir, 'narrow.onnx'), pkg, { threads: 2 })
  let sliced = 0
  for (const budget of [undefined, report.minimumBudget]) {
    const engine = await openPackage(pkg, { threads: 2, ...(budget === undefined ? {} : { memoryBudget: budget }) })
    const got = await engine.infer(feeds)
    const s = engine.stats()
    sliced += s.slicedLayers
    await engine.close()
    const c = compareTensors(got.y!, want.y!, 1e-4, 1e-4)
    t.ok(c.ok, `package at ${budget ?? 'unlimited'} budget (${s.slicedLayers} sliced layers, ${s.changedKernels} changed kernels): max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
  t.ok(sliced > 0, 'at its minimum budget the package slices layers')
})
