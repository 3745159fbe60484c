// SPDX-License-Identifier: Apache-2.0
// The narrow GEMM convolution (runtime/conv_narrow.h) in whole graphs: on small planes with long
// reductions, for strided convolutions and for 3x3 ones over few channels the Conv op chooses it, and
// the plain engine and a memory-budgeted package (whose slicing cuts its 16-channel weight panels into
// channel ranges and its output pixels into slices) compute what onnxruntime computes.
import t, { type Test } from 'tap'
import { open, type Tensor } from '../../lib/index.js'
import { decodeConvCall } from '../../lib/model/ops/nn-conv.js'
import { packageRunsAtMinimum } from '../helpers/budget.js'
import { compareTensors } from '../helpers/compare.js'
import { concreteGraph, convNode as conv, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

const weights = seededWeights(41)

/**
 * x [1, 64, 7, 7] -> 3x3 64->256 + Relu = a       (K = 576 over 49 pixels: one padded phase plane per channel)
 * a -> 1x1 256->272 = h                           (17 panels of 16 channels: an odd count; B in place)
 * h -> 1x1 272->256, + a (a fused residual), Relu = c
 * c -> 1x1 stride 2 256->40 = y [1, 40, 4, 4]     (the one phase a strided 1x1 reads; a partial last panel)
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
      conv('c', 'w3', 'b3', 'y', 1, { stride: 2 }),
    ],
  })
}

const input = () => seededInput([1, 64, 7, 7], 9)

/**
 * Where the phase planes replace im2col and Winograd:
 * x [1, 16, 23, 23] -> 3x3 16->256 + Relu = a       (16 input channels: narrow, not Winograd; 23 + 2 columns per plane row)
 * a -> 3x3 stride 2 256->40, pad 1 = y [1, 40, 12, 12] (four phase planes of 13 x 13 per channel)
 */
function phaseModel(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 16, 23, 23] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('v0', [256, 16, 3, 3], 0.1), weights('c0', [256], 0.3),
      weights('v1', [40, 256, 3, 3], 0.03), weights('c1', [40], 0.3),
    ],
    nodes: [
      conv('x', 'v0', 'c0', 'a0', 3), { op: 'Relu', inputs: ['a0'], outputs: ['a'] },
      conv('a', 'v1', 'c1', 'y', 3, { stride: 2 }),
    ],
  })
}

/** The Conv kernels the graph of `model` chooses for input `dims`, in order. */
function convKernels(model: Uint8Array, dims: number[]): string[] {
  const { steps } = concreteGraph(model, dims).inferred
  return steps.filter((s) => s.kernel?.op === 'Conv').map((s) => decodeConvCall(s.kernel!, s.inputs[0]!.dims as number[], s.outputs[0]!.dims as number[]).kernel)
}

/** The plain engine (1 and 2 threads) and the package at its minimum budget, which must slice, give onnxruntime's y. */
async function matchesOnnxruntime(t: Test, path: string, feeds: Record<string, Tensor>): Promise<void> {
  const want = await runOrt(path, feeds)
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    const got = await engine.infer(feeds)
    await engine.close()
    const c = compareTensors(got.y!, want.y!, 1e-4, 1e-4)
    t.ok(c.ok, `plain engine, ${threads} threads: max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
  let sliced = 0
  for (const { budget, outputs, stats: s } of (await packageRunsAtMinimum(t, path, feeds)).runs) {
    sliced += s.slicedLayers
    const c = compareTensors(outputs.y!, want.y!, 1e-4, 1e-4)
    t.ok(c.ok, `package at ${budget ?? 'unlimited'} budget (${s.slicedLayers} sliced layers, ${s.changedKernels} changed kernels): max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
  t.ok(sliced > 0, 'at its minimum budget the package slices layers')
}

t.test('every Conv of the model chooses the narrow GEMM', async (t) => {
  t.same(convKernels(narrowModel(), [1, 64, 7, 7]), ['narrow', 'narrow', 'narrow', 'narrow'])
  const { steps } = concreteGraph(narrowModel(), [1, 64, 7, 7]).inferred
  t.ok(steps.every((s) => s.kernel?.op !== 'Conv' || s.kernel.prepack?.[0]?.transform === 'conv_narrow_filter'), 'each reads its weight through conv_narrow_filter')
})

t.test('the plain engine and a budgeted package match onnxruntime', async (t) => {
  await matchesOnnxruntime(t, tempFile('narrow.onnx', narrowModel()), { x: input() })
})

t.test('phase planes: a 3x3 over 16 channels and a stride-2 3x3 match onnxruntime, plain and budgeted', async (t) => {
  t.same(convKernels(phaseModel(), [1, 16, 23, 23]), ['narrow', 'narrow'], 'both choose the narrow GEMM over Winograd and im2col')
  await matchesOnnxruntime(t, tempFile('phases.onnx', phaseModel()), { x: seededInput([1, 16, 23, 23], 11) })
})

t.test('a 3-D convolution takes the narrow GEMM over im2col columns and matches onnxruntime, plain and budgeted', async (t) => {
  // x [1, 32, 4, 4, 4] -> 3x3x3 32->40, pad 1: K = 864 over 64 pixels (narrow; 3-D keeps row-major columns)
  const model = makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 32, 4, 4, 4] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('u', [40, 32, 3, 3, 3], 0.05), weights('d', [40], 0.3)],
    nodes: [{ op: 'Conv', inputs: ['x', 'u', 'd'], outputs: ['y'], name: 'conv3d', ints: { kernel_shape: [3, 3, 3], pads: Array(6).fill(1) } }],
  })
  t.same(convKernels(model, [1, 32, 4, 4, 4]), ['narrow'])
  await matchesOnnxruntime(t, tempFile('conv3d.onnx', model), { x: seededInput([1, 32, 4, 4, 4], 13) })
})

t.test("SqueezeNet's tail: a 3x3 over 64 channels at 13x13 (not F(2,3)) and a 1x1 to 1000 channels (not gemm1x1) match onnxruntime, plain and budgeted", async (t) => {
  // x [1, 64, 13, 13] -> 3x3 64->256 pad 1 + Relu = e     (too few 6x6 tiles for F(6,3); 64 input channels: narrow, not F(2,3))
  // e -> 1x1 256->1000 = y [1, 1000, 13, 13]               (169 pixels, K = 256, 1000 channels: 63 panels of 16, the last partial)
  const model = makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 64, 13, 13] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('s0', [256, 64, 3, 3], 0.04), weights('t0', [256], 0.3),
      weights('s1', [1000, 256, 1, 1], 0.06), weights('t1', [1000], 0.3),
    ],
    nodes: [
      conv('x', 's0', 't0', 'e0', 3), { op: 'Relu', inputs: ['e0'], outputs: ['e'] },
      conv('e', 's1', 't1', 'y', 1),
    ],
  })
  t.same(convKernels(model, [1, 64, 13, 13]), ['narrow', 'narrow'])
  await matchesOnnxruntime(t, tempFile('squeeze-tail.onnx', model), { x: seededInput([1, 64, 13, 13], 17) })
})
