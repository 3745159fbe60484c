// SPDX-License-Identifier: Apache-2.0
// The native ConvMaxPool (native/runtime/conv_pool.h) against the two ops it replaces, Conv then
// MaxPool, on shapes that exercise the bands (padding above the first band, rows past the image, the
// conv rows neighbouring bands share, ceil_mode, pool dilation, batch 2), 1 and 2 threads; and its
// errors. No onnxruntime here, so it also runs on arm64 under qemu (the NEON rows kernels).
import t from 'tap'
import { binding } from '../../lib/native/binding.js'
import { compareTensors } from '../helpers/compare.js'
import { f32, u8 } from '../helpers/op-tensors.js'

const b = binding()
const window = (kernel: number[], strides: number[], dilations: number[], begin: number[], end: number[]) => [2, ...kernel, ...strides, ...dilations, ...begin, ...end]
const outLen = (len: number, k: number, s: number, d: number, pb: number, pe: number, ceil = false) => {
  const span = len + pb + pe - ((k - 1) * d + 1)
  let out = (ceil ? Math.ceil(span / s) : Math.floor(span / s)) + 1
  if (ceil && (out - 1) * s >= len + pb) out -= 1
  return out
}

interface Case {
  readonly x: number[]
  readonly m: number
  readonly k: number[]
  readonly s: number[]
  readonly pb: number[]
  readonly pe: number[]
  readonly pk: number[]
  readonly ps: number[]
  readonly pd: number[]
  readonly ppb: number[]
  readonly ppe: number[]
  readonly ceil?: boolean
  readonly act: 0 | 1 | 2
}

const cases: Case[] = [
  // SqueezeNet's stem and pool, narrower: no padding anywhere
  { x: [1, 3, 67, 67], m: 16, k: [3, 3], s: [2, 2], pb: [0, 0], pe: [0, 0], pk: [3, 3], ps: [2, 2], pd: [1, 1], ppb: [0, 0], ppe: [0, 0], act: 1 },
  // ResNet's: 7x7 s2 pad 3, pool pad 1; two images
  { x: [2, 3, 64, 58], m: 24, k: [7, 7], s: [2, 2], pb: [3, 3], pe: [3, 3], pk: [3, 3], ps: [2, 2], pd: [1, 1], ppb: [1, 1], ppe: [1, 1], act: 1 },
  // 128 x 80 conv rows: eight bands of five pool rows
  { x: [1, 3, 160, 160], m: 128, k: [3, 3], s: [2, 2], pb: [1, 1], pe: [1, 1], pk: [3, 3], ps: [2, 2], pd: [1, 1], ppb: [0, 0], ppe: [0, 0], act: 2 },
  // 4 channels, 5x3 kernel, strides (1, 2), asymmetric pads, 2x2 pool with ceil_mode
  { x: [1, 4, 33, 35], m: 8, k: [5, 3], s: [1, 2], pb: [2, 1], pe: [1, 0], pk: [2, 2], ps: [2, 2], pd: [1, 1], ppb: [0, 0], ppe: [1, 1], ceil: true, act: 0 },
  // pool dilation 2 with padding
  { x: [1, 1, 40, 41], m: 5, k: [3, 3], s: [1, 1], pb: [1, 1], pe: [1, 1], pk: [3, 3], ps: [2, 2], pd: [2, 2], ppb: [1, 1], ppe: [1, 1], act: 0 },
]

t.test('ConvMaxPool equals Conv then MaxPool', async (t) => {
  cases.forEach((c, ci) => {
    const [n, C, H, W] = c.x as [number, number, number, number]
    const oh = outLen(H, c.k[0]!, c.s[0]!, 1, c.pb[0]!, c.pe[0]!)
    const ow = outLen(W, c.k[1]!, c.s[1]!, 1, c.pb[1]!, c.pe[1]!)
    const poh = outLen(oh, c.pk[0]!, c.ps[0]!, c.pd[0]!, c.ppb[0]!, c.ppe[0]!, c.ceil)
    const pow = outLen(ow, c.pk[1]!, c.ps[1]!, c.pd[1]!, c.ppb[1]!, c.ppe[1]!, c.ceil)
    const x = f32(c.x, (i) => Math.sin(i * 0.37 + ci))
    const w = f32([c.m, C, ...c.k], (i) => Math.cos(i * 1.3 + ci) * 0.5)
    const bias = f32([c.m], (i) => 0.1 * i - 0.3)
    const floats = c.act === 2 ? [0, 1.5] : []
    const convWin = window(c.k, c.s, [1, 1], c.pb, c.pe)
    const poolWin = window(c.pk, c.ps, c.pd, c.ppb, c.ppe)
    // the reference: the direct Conv (algo 0) with the same activation, then MaxPool
    const conv = f32([n, c.m, oh, ow])
    b.runOp('Conv', [x, w, bias], [conv], [1, ...convWin, 0, 1, c.act], floats)
    const want = f32([n, c.m, poh, pow])
    b.runOp('MaxPool', [conv], [want], [...poolWin, 0], [])
    for (const threads of [1, 2]) {
      const got = f32([n, c.m, poh, pow])
      b.runOp('ConvMaxPool', [x, w, bias], [got, u8(16 << 20)], [1, ...convWin, ...poolWin, c.act], floats, threads)
      const r = compareTensors(got as never, want as never, 1e-5, 1e-5)
      t.ok(r.ok, `case ${ci} (${JSON.stringify(c)}), ${threads} threads: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
    }
  })
})

t.test('ConvMaxPool rejects what it cannot run', async (t) => {
  // 3x3 conv (pad 1) over 20x20, pool 2x2 s2: Y [1, 4, 10, 10]
  const ints = [1, ...window([3, 3], [1, 1], [1, 1], [1, 1], [1, 1]), ...window([2, 2], [2, 2], [1, 1], [0, 0], [0, 0]), 0]
  t.throws(() => b.runOp('ConvMaxPool', [f32([1, 3, 20, 20]), f32([4, 3, 3, 3]), null], [f32([1, 4, 10, 10]), u8(64)], ints, []),
    /failed to run ConvMaxPool: workspace of 64 bytes is too small/, 'a workspace too small')
  t.throws(() => b.runOp('ConvMaxPool', [f32([1, 8, 20, 20]), f32([4, 8, 3, 3]), null], [f32([1, 4, 10, 10]), u8(1 << 20)], ints, []),
    /only a conv by rows/, 'a conv over 8 channels does not run by rows')
  t.throws(() => b.runOp('ConvMaxPool', [f32([1, 3, 20, 20]), f32([4, 3, 3, 3]), null], [f32([1, 4, 7, 10]), u8(1 << 20)], ints, []),
    /output dim disagrees/, 'Y dims that are not the pool of the conv')
  t.throws(() => b.runOp('ConvMaxPool', [f32([1, 3, 20, 20]), f32([4, 3, 3, 3]), null], [f32([1, 4, 10, 10]), u8(1 << 20)], [2, ...ints.slice(1)], []),
    /bad attributes/, 'groups')
  t.throws(() => b.runOp('ConvMaxPool', [f32([1, 3, 20, 20]), f32([4, 3, 3, 3]), null], [f32([1, 4, 10, 10])], ints, []),
    /failed to run ConvMaxPool: expected/, 'no workspace output')
})
