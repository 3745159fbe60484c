// SPDX-License-Identifier: Apache-2.0
// Dead taps (lib/model/ops/conv-taps.ts): which kernel taps some output reads inside the input, and that
// the trimmed convolution (window, pads) computes the same as the whole one -- a float64 direct
// convolution of both on random 2-D shapes, with dilations and pads large against the input.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { liveTaps, trimDeadTaps } from '../../lib/model/ops/conv-taps.js'
import type { ConvShape } from '../../lib/model/ops/conv-cost.js'

function conv2d(c: number, m: number, hw: number, k: number, d: number, pad: number, stride = 1): { s: ConvShape; end: [number, number] } {
  const out = Math.floor((hw + 2 * pad - ((k - 1) * d + 1)) / stride) + 1
  return {
    s: { batch: 1, inChannels: c, outChannels: m, group: 1, in: [1, hw, hw], out: [1, out, out], kernel: [1, k, k], stride: [1, stride, stride], dilation: [1, d, d], pad: [0, pad, pad] },
    end: [pad, pad],
  }
}

t.test("DeepLabV3's ASPP at its 14x14 map", async (t) => {
  for (const d of [24, 36]) {
    const { s, end } = conv2d(960, 256, 14, 3, d, d)
    const r = trimDeadTaps(s, end)!
    t.same(r.window, { ky0: 1, ky1: 2, kx0: 1, kx1: 2 }, `dilation ${d}: only the centre tap reads the input`)
    t.same(r.shape.kernel, [1, 1, 1])
    t.same(r.shape.pad, [0, 0, 0])
    t.same(r.padEnd, [0, 0], 'a 1x1 convolution without padding')
  }
  t.equal(trimDeadTaps(conv2d(960, 256, 14, 3, 12, 12).s, [12, 12]), undefined, 'dilation 12: every tap reads the input somewhere')
  t.equal(trimDeadTaps(conv2d(64, 64, 56, 3, 1, 1).s, [1, 1]), undefined, 'an ordinary 3x3')
  t.same(liveTaps(9, 9, 5, 1, 9, 18), [2, 3], '5 taps 9 apart over 9 columns padded by 18: the middle one')
  t.same(liveTaps(9, 9, 3, 1, 4, 4), [0, 3])
})

/** float64 direct convolution of x [C, H, W] by w [M, C, KH, KW]; zero padding. */
function reference(s: ConvShape, x: Float64Array, w: Float64Array): Float64Array {
  const [C, M, H, W, KH, KW] = [s.inChannels, s.outChannels, s.in[1], s.in[2], s.kernel[1], s.kernel[2]]
  const [OH, OW] = [s.out[1], s.out[2]]
  const y = new Float64Array(M * OH * OW)
  for (let m = 0; m < M; m++) for (let oy = 0; oy < OH; oy++) for (let ox = 0; ox < OW; ox++) {
    let acc = 0
    for (let c = 0; c < C; c++) for (let ky = 0; ky < KH; ky++) for (let kx = 0; kx < KW; kx++) {
      const iy = oy * s.stride[1] - s.pad[1] + ky * s.dilation[1]
      const ix = ox * s.stride[2] - s.pad[2] + kx * s.dilation[2]
      if (iy >= 0 && iy < H && ix >= 0 && ix < W) acc += x[(c * H + iy) * W + ix]! * w[((m * C + c) * KH + ky) * KW + kx]!
    }
    y[(m * OH + oy) * OW + ox] = acc
  }
  return y
}

t.test('the trimmed convolution computes the whole one (random shapes, float64)', async (t) => {
  const rand = seededRandom(91)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  let trimmed = 0
  for (let i = 0; i < 300; i++) {
    const [h, w] = [pick([1, 3, 5, 9]), pick([1, 4, 7, 10])]
    const [kh, kw] = [pick([1, 3, 5]), pick([1, 3, 5])]
    const [dh, dw] = [pick([1, 2, 4, 9]), pick([1, 3, 6, 12])]
    const stride = pick([1, 2])
    const pt = pick([0, 2, 6, 12, 18]), pl = pick([0, 3, 6, 12]), pb = pick([0, 1, 6, 12]), pr = pick([0, 3, 12, 18])
    const oh = Math.floor((h + pt + pb - ((kh - 1) * dh + 1)) / stride) + 1
    const ow = Math.floor((w + pl + pr - ((kw - 1) * dw + 1)) / stride) + 1
    if (oh < 1 || ow < 1) continue
    const s: ConvShape = { batch: 1, inChannels: 2, outChannels: 2, group: 1, in: [1, h, w], out: [1, oh, ow], kernel: [1, kh, kw], stride: [1, stride, stride], dilation: [1, dh, dw], pad: [0, pt, pl] }
    const r = trimDeadTaps(s, [pb, pr])
    if (r === undefined) continue
    trimmed++
    const x = Float64Array.from({ length: 2 * h * w }, () => rand() * 2 - 1)
    const wt = Float64Array.from({ length: 2 * 2 * kh * kw }, () => rand() * 2 - 1)
    const { ky0, ky1, kx0, kx1 } = r.window
    const cut = new Float64Array(2 * 2 * (ky1 - ky0) * (kx1 - kx0))
    let n = 0
    for (let mc = 0; mc < 4; mc++) for (let ky = ky0; ky < ky1; ky++) for (let kx = kx0; kx < kx1; kx++) cut[n++] = wt[(mc * kh + ky) * kw + kx]!
    const outT = [Math.floor((h + r.shape.pad[1] + r.padEnd[0] - ((ky1 - ky0 - 1) * dh + 1)) / stride) + 1, Math.floor((w + r.shape.pad[2] + r.padEnd[1] - ((kx1 - kx0 - 1) * dw + 1)) / stride) + 1]
    if (outT[0] !== oh || outT[1] !== ow) {
      t.fail(`${JSON.stringify(s)}: the trimmed pads give ${outT} outputs, not ${[oh, ow]}`)
      continue
    }
    const want = reference(s, x, wt)
    const got = reference(r.shape, x, cut)
    let bad = 0
    for (let j = 0; j < want.length; j++) if (Math.abs(want[j]! - got[j]!) > 1e-12) bad++
    if (bad > 0) t.fail(`${JSON.stringify(s)} trimmed to ${JSON.stringify(r.window)}: ${bad} outputs differ`)
  }
  t.ok(trimmed > 30, `${trimmed} of the shapes had dead taps`)
})
