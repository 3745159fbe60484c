// SPDX-License-Identifier: Apache-2.0
// The native ConvDepthwise (native/runtime/conv_depthwise.h) against the two ops it replaces, a Conv
// then a depthwise Conv, on shapes that exercise the bands (padding above the first band, rows past
// the tensor, the middle rows neighbouring bands share, asymmetric and zero pads, batch 2), both
// forms of the first conv (pointwise GEMM, stem by rows), 1 and 2 threads; and its errors. No
// onnxruntime here, so it also runs on arm64 under qemu (the NEON GEMM, rows and depthwise kernels).
import t from 'tap'
import { binding } from '../../lib/native/binding.js'
import { convDepthwiseWorkspaceBytes } from '../../lib/model/ops/conv-cost.js'
import type { ConvShape } from '../../lib/model/ops/conv-cost.js'
import { compareTensors } from '../helpers/compare.js'
import { f32, u8 } from '../helpers/op-tensors.js'

const b = binding()
const window = (kernel: number[], strides: number[], begin: number[], end: number[]) => [2, ...kernel, ...strides, 1, 1, ...begin, ...end]
const outLen = (len: number, k: number, s: number, pb: number, pe: number) => Math.floor((len + pb + pe - k) / s) + 1

interface Case {
  readonly what: string
  readonly x: number[]
  readonly m: number
  /** The first conv: kernel, strides, pads begin and end (a 1x1 one is the pointwise form). */
  readonly k: number[]
  readonly s: number[]
  readonly pb: number[]
  readonly pe: number[]
  /** The depthwise 3x3: stride, pads begin and end. */
  readonly ds: number
  readonly dpb: number[]
  readonly dpe: number[]
  readonly act1: 0 | 1 | 2
  readonly act2: 0 | 1 | 2
  readonly bias1: boolean
  readonly bias2: boolean
}

const pointwise = { k: [1, 1], s: [1, 1], pb: [0, 0], pe: [0, 0] }
const cases: Case[] = [
  // MobileNetV2's second block, narrower: expand 16 -> 48, Clip(0, 6), depthwise stride 2 pad 1
  { what: 'expand then stride-2 depthwise', x: [1, 16, 56, 56], m: 48, ...pointwise, ds: 2, dpb: [1, 1], dpe: [1, 1], act1: 2, act2: 2, bias1: true, bias2: true },
  // its third: stride 1, two images
  { what: 'expand then stride-1 depthwise, batch 2', x: [2, 24, 40, 40], m: 72, ...pointwise, ds: 1, dpb: [1, 1], dpe: [1, 1], act1: 1, act2: 1, bias1: true, bias2: true },
  // 128 x 100 middle rows: bands of a few rows, each recomputing the two rows it shares
  { what: 'many bands, asymmetric depthwise pads', x: [1, 8, 120, 100], m: 128, ...pointwise, ds: 1, dpb: [1, 0], dpe: [0, 1], act1: 2, act2: 0, bias1: true, bias2: false },
  { what: 'no biases, no activations, unpadded stride-2 depthwise over an odd plane', x: [1, 12, 37, 41], m: 20, ...pointwise, ds: 2, dpb: [0, 0], dpe: [0, 0], act1: 0, act2: 0, bias1: false, bias2: false },
  // MobileNetV2's stem (3x3 s2 over RGB) and its first depthwise
  { what: 'stem by rows then depthwise', x: [1, 3, 64, 64], m: 32, k: [3, 3], s: [2, 2], pb: [1, 1], pe: [1, 1], ds: 1, dpb: [1, 1], dpe: [1, 1], act1: 2, act2: 2, bias1: true, bias2: true },
  { what: 'stem by rows, 4 channels, 5x3 kernel, strides (1, 2), stride-2 depthwise', x: [2, 4, 45, 47], m: 40, k: [5, 3], s: [1, 2], pb: [2, 1], pe: [1, 0], ds: 2, dpb: [1, 1], dpe: [1, 1], act1: 1, act2: 2, bias1: false, bias2: true },
  // a middle tensor of 96 x 130 x 130 floats: more than 40 bands
  { what: 'stem by rows, many bands', x: [1, 3, 260, 260], m: 96, k: [3, 3], s: [2, 2], pb: [1, 1], pe: [1, 1], ds: 2, dpb: [1, 1], dpe: [1, 1], act1: 2, act2: 2, bias1: true, bias2: true },
]

const clip = [0, 1.5]
const floatsOf = (act: number) => (act === 2 ? clip : [])

t.test('ConvDepthwise equals Conv then depthwise Conv', async (t) => {
  cases.forEach((c, ci) => {
    const [n, C, H, W] = c.x as [number, number, number, number]
    const mh = outLen(H, c.k[0]!, c.s[0]!, c.pb[0]!, c.pe[0]!)
    const mw = outLen(W, c.k[1]!, c.s[1]!, c.pb[1]!, c.pe[1]!)
    const oh = outLen(mh, 3, c.ds, c.dpb[0]!, c.dpe[0]!)
    const ow = outLen(mw, 3, c.ds, c.dpb[1]!, c.dpe[1]!)
    const x = f32(c.x, (i) => Math.sin(i * 0.37 + ci))
    const w1 = f32([c.m, C, ...c.k], (i) => Math.cos(i * 1.3 + ci) * 0.5)
    const b1 = c.bias1 ? f32([c.m], (i) => 0.1 * (i % 7) - 0.3) : null
    const w2 = f32([c.m, 1, 3, 3], (i) => Math.sin(i * 0.71 + ci) * 0.6)
    const b2 = c.bias2 ? f32([c.m], (i) => 0.05 * (i % 5) - 0.1) : null
    const convWin = window(c.k, c.s, c.pb, c.pe)
    const dwWin = window([3, 3], [c.ds, c.ds], c.dpb, c.dpe)
    // the reference: the direct Conv (algo 0) for both, each with its activation
    const mid = f32([n, c.m, mh, mw])
    b.runOp('Conv', [x, w1, b1], [mid], [1, ...convWin, 0, 1, c.act1], floatsOf(c.act1))
    const want = f32([n, c.m, oh, ow])
    b.runOp('Conv', [mid, w2, b2], [want], [c.m, ...dwWin, 0, 1, c.act2], floatsOf(c.act2))
    // The planner's workspace (lib/model/ops/conv-cost.ts, the GEMM part bounded over the ISAs) for 1 and 2
    // threads: the op runs in either (a smaller one than it needs for 1 thread is an error, below).
    const s: ConvShape = { batch: n, inChannels: C, outChannels: c.m, group: 1, in: [1, H, W], out: [1, mh, mw], kernel: [1, c.k[0]!, c.k[1]!], stride: [1, c.s[0]!, c.s[1]!], dilation: [1, 1, 1], pad: [0, c.pb[0]!, c.pb[1]!] }
    for (const threads of [1, 2]) {
      const got = f32([n, c.m, oh, ow], () => Number.NaN)
      const ws = convDepthwiseWorkspaceBytes(s, { stride: c.ds, padBegin: c.dpb, out: [oh, ow] }, threads)
      b.runOp('ConvDepthwise', [x, w1, b1, w2, b2], [got, u8(ws)], [...convWin, ...dwWin, c.act1, c.act2], [...(c.act1 === 2 ? clip : [0, 0]), ...clip], threads)
      const r = compareTensors(got as never, want as never, 1e-5, 1e-5)
      t.ok(r.ok, `${c.what} (case ${ci}), ${threads} threads, ${ws} bytes of workspace: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
    }
  })
})

t.test('ConvDepthwise rejects what it cannot run', async (t) => {
  // expand 8 -> 16 over 20x20, depthwise 3x3 s2 pad 1: Y [1, 16, 10, 10]
  const ints = [...window([1, 1], [1, 1], [0, 0], [0, 0]), ...window([3, 3], [2, 2], [1, 1], [1, 1]), 0, 0]
  const x = f32([1, 8, 20, 20])
  const w1 = f32([16, 8, 1, 1])
  const w2 = f32([16, 1, 3, 3])
  const y = () => f32([1, 16, 10, 10])
  t.throws(() => b.runOp('ConvDepthwise', [x, w1, null, w2, null], [y(), u8(64)], ints, []),
    /failed to run ConvDepthwise: workspace of 64 bytes is too small/, 'a workspace too small')
  const wide = [...window([3, 3], [1, 1], [1, 1], [1, 1]), ...ints.slice(11)]
  t.throws(() => b.runOp('ConvDepthwise', [x, f32([16, 8, 3, 3]), null, w2, null], [y(), u8(1 << 20)], wide, []),
    /only a pointwise conv .* or one by rows/, 'a 3x3 conv over 8 channels is neither pointwise nor by rows')
  t.throws(() => b.runOp('ConvDepthwise', [x, w1, null, w2, null], [f32([1, 16, 9, 10]), u8(1 << 20)], ints, []),
    /output dim disagrees/, 'Y dims that are not the depthwise of the middle tensor')
  t.throws(() => b.runOp('ConvDepthwise', [x, w1, null, f32([16, 2, 3, 3]), null], [y(), u8(1 << 20)], ints, []),
    /W2 \[M, 1, 3, 3\]/, 'a grouped, not depthwise, second conv')
  t.throws(() => b.runOp('ConvDepthwise', [x, w1, null, w2, null], [y(), u8(1 << 20)], [...ints.slice(0, -1), 7], []),
    /bad activation code 7/, 'an unknown activation')
  t.throws(() => b.runOp('ConvDepthwise', [x, w1, null, w2, null], [y()], ints, []),
    /failed to run ConvDepthwise: expected/, 'no workspace output')
  t.throws(() => b.runOp('ConvDepthwise', [x, w1, null, w2, f32([15])], [y(), u8(1 << 20)], ints, []),
    /B2 must be \[16\]/, 'a bias of the wrong length')
})
