// SPDX-License-Identifier: Apache-2.0
// Every convolution algorithm (direct, im2col + GEMM with input slices, 1x1 GEMM, Winograd F(6,3) and
// F(2,3) on transformed or (lean) raw-sized filters, depthwise 3x3, the narrow GEMM) on every ISA this machine runs, 1 and 2 threads, against a float64 direct
// convolution: odd sizes, asymmetric padding, strides, dilations, groups, several channel counts, bias
// and a Relu/Clip clamp. x is read 4 bytes into its buffer, y carries a canary, and the native side
// checks a canary after the workspace (sized exactly by conv_cost).
// Tolerance per output, S = |bias| + sum |x * w|: direct, im2col, gemm1x1, narrow and depthwise 16 * 2^-20 * S
// (float32 sums in any order); Winograd F(2,3) 2^-18 * S and F(6,3) 2^-14 * S (the transforms scale values
// by up to 5.25 and 32 around the sums; the lean kernels, whose filter transform runs in float, the
// same bounds). Measured worst cases here: 2^-22 for the direct-like algorithms, 2^-21.7 for F(2,3),
// 2^-16.2 for F(6,3), 2^-22.2 and 2^-15.5 for the lean F(2,3) and F(6,3) (2^-14.7 on arm64's scalar
// path under qemu); the test prints them.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding } from '../../lib/native/binding.js'

type Fn = (...args: unknown[]) => unknown
const testing = binding()._testing as unknown as Record<string, Fn> & { isas(): string[] }
const isas = testing.isas()
const CANARY = -777.25

interface Shape {
  n: number
  c: number
  m: number
  group: number
  h: number
  w: number
  kh: number
  kw: number
  sh: number
  sw: number
  dh: number
  dw: number
  pt: number
  pl: number
  pb: number
  pr: number
}
type Algo = 'direct' | 'im2col' | 'gemm1x1' | 'winograd63' | 'winograd23' | 'depthwise' | 'narrow' | 'winograd63_lean' | 'winograd23_lean' | 'grouped' | 'taps'

const tolScale: Record<Algo, number> = {
  direct: 16 * 2 ** -20,
  im2col: 16 * 2 ** -20,
  gemm1x1: 16 * 2 ** -20,
  depthwise: 16 * 2 ** -20,
  narrow: 16 * 2 ** -20,
  grouped: 16 * 2 ** -20,
  taps: 16 * 2 ** -20,
  winograd23: 2 ** -18,
  winograd63: 2 ** -14,
  winograd23_lean: 2 ** -18,
  winograd63_lean: 2 ** -14,
}

function random(n: number, seed: number): Float32Array {
  const rand = seededRandom(seed)
  const out = new Float32Array(n + 1)
  for (let i = 0; i < out.length; i++) out[i] = rand() * 2 - 1
  return out.subarray(1)
}

function outDims(s: Shape): [number, number] {
  const oh = Math.floor((s.h + s.pt + s.pb - ((s.kh - 1) * s.dh + 1)) / s.sh) + 1
  const ow = Math.floor((s.w + s.pl + s.pr - ((s.kw - 1) * s.dw + 1)) / s.sw) + 1
  return [oh, ow]
}

/** float64 direct convolution and the error scale S of every output. */
function reference(s: Shape, x: Float32Array, w: Float32Array, bias: Float32Array | undefined) {
  const [oh, ow] = outDims(s)
  const cg = s.c / s.group
  const mg = s.m / s.group
  const y = new Float64Array(s.n * s.m * oh * ow)
  const scale = new Float64Array(y.length)
  for (let n = 0; n < s.n; n++) {
    for (let m = 0; m < s.m; m++) {
      const g = Math.floor(m / mg)
      for (let oy = 0; oy < oh; oy++) {
        for (let ox = 0; ox < ow; ox++) {
          let acc = bias ? bias[m]! : 0
          let abs = Math.abs(acc)
          for (let c = 0; c < cg; c++) {
            for (let ky = 0; ky < s.kh; ky++) {
              const iy = oy * s.sh - s.pt + ky * s.dh
              if (iy < 0 || iy >= s.h) continue
              for (let kx = 0; kx < s.kw; kx++) {
                const ix = ox * s.sw - s.pl + kx * s.dw
                if (ix < 0 || ix >= s.w) continue
                const term = x[((n * s.c + g * cg + c) * s.h + iy) * s.w + ix]! * w[((m * cg + c) * s.kh + ky) * s.kw + kx]!
                acc += term
                abs += Math.abs(term)
              }
            }
          }
          const at = ((n * s.m + m) * oh + oy) * ow + ox
          y[at] = acc
          scale[at] = abs
        }
      }
    }
  }
  return { y, scale }
}

function shape(p: Partial<Shape>): Shape {
  return { n: 1, c: 1, m: 1, group: 1, h: 5, w: 5, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1, ...p }
}

const cases: Array<{ algos: Algo[]; s: Shape }> = []
// 3x3 stride 1: every algorithm that applies, odd sizes around the 6x6 and 2x2 tiles, several channel counts.
for (const [c, m] of [[1, 1], [3, 5], [8, 16], [17, 33]] as const) {
  for (const [h, w] of [[1, 1], [5, 7], [6, 6], [7, 13], [13, 8]] as const) {
    cases.push({ algos: ['direct', 'im2col', 'winograd63', 'winograd23'], s: shape({ n: c === 3 ? 2 : 1, c, m, h, w, pt: 1, pl: 0, pb: 2, pr: 1 }) })
  }
}
cases.push({ algos: ['im2col', 'winograd63', 'winograd23'], s: shape({ c: 64, m: 24, h: 15, w: 15 }) })
cases.push({ algos: ['im2col', 'winograd63', 'winograd23'], s: shape({ c: 5, m: 7, h: 20, w: 21, pt: 0, pl: 0, pb: 0, pr: 0 }) })
// 1x1: plain GEMM on the input, groups.
for (const [c, m, group] of [[1, 1, 1], [16, 17, 1], [12, 8, 4], [64, 40, 1]] as const) {
  cases.push({ algos: ['direct', 'im2col', 'gemm1x1'], s: shape({ n: 2, c, m, group, h: 7, w: 9, kh: 1, kw: 1, pt: 0, pl: 0, pb: 0, pr: 0 }) })
}
// Weight rows a multiple of 4 KiB apart (K = 1024 or 2048 per group): the GEMM packs them instead
// of reading them in place (a_rows_alias in runtime/gemm_driver.cc).
cases.push({ algos: ['direct', 'im2col', 'gemm1x1'], s: shape({ c: 1024, m: 20, h: 5, w: 6, kh: 1, kw: 1, pt: 0, pl: 0, pb: 0, pr: 0 }) })
cases.push({ algos: ['direct', 'im2col', 'gemm1x1'], s: shape({ c: 4096, m: 34, group: 2, h: 3, w: 3, kh: 1, kw: 1, pt: 0, pl: 0, pb: 0, pr: 0 }) })
// im2col generality: strides, dilations, rectangular kernels, groups, asymmetric pads.
cases.push({ algos: ['direct', 'im2col'], s: shape({ c: 4, m: 6, group: 2, h: 11, w: 9, kh: 3, kw: 2, sh: 2, sw: 3, dh: 2, dw: 1, pt: 2, pl: 0, pb: 1, pr: 2 }) })
cases.push({ algos: ['direct', 'im2col'], s: shape({ n: 2, c: 3, m: 16, h: 17, w: 17, kh: 7, kw: 7, sh: 2, sw: 2, pt: 3, pl: 3, pb: 3, pr: 3 }) })
cases.push({ algos: ['direct', 'im2col'], s: shape({ c: 5, m: 9, h: 1, w: 23, kh: 1, kw: 5, pt: 0, pb: 0, pl: 2, pr: 2 }) })
cases.push({ algos: ['direct', 'im2col'], s: shape({ c: 3, m: 7, h: 9, w: 61, kh: 3, kw: 3, sh: 3, sw: 3, dh: 2, dw: 2, pt: 2, pl: 2, pb: 2, pr: 1 }) })
// Depthwise 5x5 and first layers: the direct kernels' 16-, 8-column blocks, overlapped tail and borders.
cases.push({ algos: ['direct', 'im2col'], s: shape({ c: 12, m: 12, group: 12, h: 9, w: 40, kh: 5, kw: 5, pt: 2, pl: 2, pb: 2, pr: 2 }) })
cases.push({ algos: ['direct', 'im2col'], s: shape({ c: 3, m: 16, h: 21, w: 45, sh: 2, sw: 2, pt: 1, pl: 1, pb: 1, pr: 1 }) })
// Stems (at most 4 input channels, groups 1, no dilation): im2col by rows. Output widths around the 8-, 16-
// and 32-column blocks (AVX2, AVX-512) and their masked tail, channel counts around the 6- and 8-channel
// blocks, stride 1 to 3 and
// strides that differ per axis, kernels wider than tall, a row stride larger than the kernel, two images.
for (const [c, m, h, w, kh, kw, sh, sw, pt, pl, pb, pr] of [
  [3, 32, 23, 45, 3, 3, 2, 2, 1, 1, 1, 1],
  [1, 13, 9, 70, 3, 5, 1, 2, 0, 2, 1, 2],
  [4, 6, 12, 33, 7, 7, 2, 2, 3, 3, 3, 3],
  [2, 7, 10, 52, 3, 3, 3, 3, 1, 0, 0, 1],
  [3, 17, 7, 17, 1, 3, 3, 1, 0, 1, 0, 1],
  [3, 12, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0],
  [3, 24, 5, 150, 3, 3, 2, 2, 1, 1, 1, 1],
] as const) {
  cases.push({ algos: ['direct', 'im2col'], s: shape({ n: 2, c, m, h, w, kh, kw, sh, sw, pt, pl, pb, pr }) })
}
// Depthwise 3x3, stride 1 and 2, with padding.
for (const sh of [1, 2]) {
  for (const [h, w] of [[1, 1], [8, 9], [17, 16], [33, 35]] as const) {
    cases.push({ algos: ['direct', 'im2col', 'depthwise'], s: shape({ n: 2, c: 6, m: 6, group: 6, h, w, sh, sw: sh, pt: 1, pl: 1, pb: sh === 2 ? 0 : 1, pr: 1 }) })
  }
}
// Depthwise 5x5, 7x7 and dilated 3x3 (depthwise_kxk), stride 1 and 2.
for (const sh of [1, 2]) {
  for (const [h, w] of [[1, 1], [9, 8], [14, 14], [40, 37]] as const) {
    for (const [k, d] of [[5, 1], [7, 1], [3, 2]] as const) {
      const p = ((k - 1) * d) / 2
      cases.push({ algos: ['direct', 'im2col', 'depthwise'], s: shape({ n: 2, c: 5, m: 5, group: 5, h, w, kh: k, kw: k, dh: d, dw: d, sh, sw: sh, pt: p, pl: p, pb: p, pr: p }) })
    }
  }
}

// The narrow GEMM (16-channel weight panels, vectors along output channels): ResNet's 7x7 stage in
// small (reductions over several k-blocks of 256, output channels that leave a last partial panel
// and an odd panel count), more than 256 output pixels (two Cᵀ tiles), a strided 1x1 downsample.
cases.push({ algos: ['direct', 'narrow'], s: shape({ c: 64, m: 40, h: 7, w: 7 }) })
cases.push({ algos: ['direct', 'narrow'], s: shape({ n: 2, c: 300, m: 33, h: 17, w: 17, kh: 1, kw: 1, pt: 0, pl: 0, pb: 0, pr: 0 }) })
cases.push({ algos: ['direct', 'narrow'], s: shape({ c: 48, m: 64, h: 14, w: 14, kh: 1, kw: 1, sh: 2, sw: 2, pt: 0, pl: 0, pb: 0, pr: 0 }) })
// B holding more floats than A: on 2 threads each takes every unit (here one and a half panels) over
// its own columns (native/runtime/gemm_narrow.cc), in place and through phase planes (A 24 x 180
// floats, B 20 planes of 23 x 21).
cases.push({ algos: ['direct', 'narrow'], s: shape({ c: 96, m: 24, h: 14, w: 14, kh: 1, kw: 1, pt: 0, pl: 0, pb: 0, pr: 0 }) })
cases.push({ algos: ['direct', 'narrow'], s: shape({ c: 20, m: 24, h: 21, w: 19 }) })
// The grouped kernel (kernels/grouped/grouped.h): RegNet's 16 channels per group and ResNeXt's 4, 18, 24
// and 32 per group (tiles of 16 + 2 and 16 + 8, or 8s on AVX2), at strides 1 and 2, on rows wider than
// four vectors (70 columns), around 16, of at most 8 (AVX-512 runs its 8-lane path, or with 16k
// channels per group its channels-in-lanes path, as AVX2 and NEON do on rows of at most 4 and 2) and
// narrower than one vector; a 5x5, a dilated 3x3, a 3x5, ShuffleNet v1's grouped 1x1, asymmetric
// padding, two images.
for (const sh of [1, 2]) {
  for (const [c, m, group] of [[32, 32, 2], [32, 32, 8], [24, 36, 2], [48, 48, 2], [6, 9, 3], [64, 64, 2]] as const) {
    for (const [h, w] of [[3, 3], [7, 7], [9, 17], [14, 14], [6, 70]] as const) {
      cases.push({ algos: ['direct', 'grouped'], s: shape({ n: c === 6 ? 2 : 1, c, m, group, h, w, sh, sw: sh, pt: 1, pl: 1, pb: sh === 2 ? 0 : 1, pr: 1 }) })
    }
  }
  // Eight groups of 16 channels, one band each: the channels-in-lanes steps' last step of 2, 6 and 4
  // pixels (2, 8 and 4 accumulators on AVX-512).
  for (const [h, w] of [[1, 18], [2, 11], [4, 5]] as const) {
    cases.push({ algos: ['direct', 'grouped'], s: shape({ c: 128, m: 128, group: 8, h: h * sh, w: w * sh, sh, sw: sh, pt: 1, pl: 1, pb: 1, pr: 1 }) })
  }
  cases.push({ algos: ['direct', 'grouped'], s: shape({ c: 16, m: 32, group: 4, h: 19, w: 23, kh: 5, kw: 5, sh, sw: sh, pt: 2, pl: 2, pb: 1, pr: 2 }) })
  cases.push({ algos: ['direct', 'grouped'], s: shape({ c: 16, m: 16, group: 2, h: 12, w: 33, dh: 2, dw: 2, sh, sw: sh, pt: 2, pl: 2, pb: 2, pr: 2 }) })
  cases.push({ algos: ['direct', 'grouped'], s: shape({ c: 8, m: 8, group: 2, h: 10, w: 21, kh: 3, kw: 5, sh, sw: sh, pt: 0, pl: 2, pb: 1, pr: 1 }) })
  cases.push({ algos: ['direct', 'grouped', 'gemm1x1'].filter((a) => sh === 1 || a !== 'gemm1x1') as Algo[], s: shape({ n: 2, c: 24, m: 48, group: 3, h: 11, w: 20, kh: 1, kw: 1, sh, sw: sh, pt: 0, pl: 0, pb: 0, pr: 0 }) })
}
// Taps mostly in the padding (DeepLabV3's ASPP: dilation past a small map) for the taps algorithm, at
// strides 1 and 2, with asymmetric pads and a rectangular kernel; then every other case of group 1.
for (const sh of [1, 2]) {
  cases.push({ algos: ['direct', 'im2col', 'taps'], s: shape({ c: 16, m: 24, h: 9, w: 9, dh: 6, dw: 6, sh, sw: sh, pt: 6, pl: 6, pb: 6, pr: 6 }) })
  cases.push({ algos: ['direct', 'im2col', 'taps'], s: shape({ n: 2, c: 5, m: 7, h: 7, w: 10, kh: 3, kw: 5, dh: 4, dw: 3, sh, sw: sh, pt: 5, pl: 2, pb: 3, pr: 7 }) })
}
for (const c of cases) if (c.s.group === 1 && !c.algos.includes('taps')) c.algos.push('taps')
// ... and the depthwise shapes above (one channel per group).
for (const c of cases) if (c.algos.includes('depthwise')) c.algos.push('grouped')
// ... and every other case of group 1 (narrow computes any convolution without groups).
for (const c of cases) if (c.s.group === 1 && !c.algos.includes('narrow')) c.algos.push('narrow')
// The lean Winograd kernels (the filter transformed per panel at run time from narrow's panels) wherever
// Winograd runs; a 14x14 plane over more than one F(2,3) tile block at 1000 slices.
cases.push({ algos: ['winograd63', 'winograd23'], s: shape({ c: 40, m: 50, h: 14, w: 14 }) })
for (const c of cases) {
  for (const a of ['winograd63', 'winograd23'] as const) if (c.algos.includes(a)) c.algos.push(`${a}_lean`)
}

const valid = cases.filter(({ s }) => outDims(s).every((d) => d >= 1))

for (const isa of isas) {
  t.test(`conv algorithms on ${isa} match a float64 direct convolution`, async (t) => {
    let checked = 0
    const worst = new Map<string, number>() // max |error| / S per algorithm, reported
    for (const [i, { algos, s }] of valid.entries()) {
      const [oh, ow] = outDims(s)
      const x = random(s.n * s.c * s.h * s.w, 10 * i + 1)
      const w = random(s.m * (s.c / s.group) * s.kh * s.kw, 10 * i + 2)
      const bias = i % 3 === 0 ? undefined : random(s.m, 10 * i + 3)
      const clamp: [number, number] | undefined = i % 4 === 1 ? [0, Infinity] : i % 4 === 2 ? [-0.25, 0.5] : undefined
      // a residual (a Conv fused with the Add after it) on every other case: added before the clamp
      const residual = i % 2 === 1 ? random(s.n * s.m * outDims(s)[0]! * outDims(s)[1]!, 10 * i + 4) : undefined
      const ref = reference(s, x, w, bias)
      const { pb, pr, ...rest } = s
      const nativeShape = { ...rest, oh, ow }
      for (const algo of algos) {
        for (const threads of [1, 2]) {
          for (const slices of algo === 'direct' || algo === 'depthwise' ? [1] : [1, 3, 1000]) {
            const len = s.n * s.m * oh * ow
            const y = new Float32Array(len + 8).fill(CANARY)
            const what = `${isa} ${algo} threads=${threads} slices=${slices} ${JSON.stringify(s)} bias=${bias !== undefined} residual=${residual !== undefined} clamp=${clamp}`
            try {
              testing.convRun!(isa, algo, { shape: nativeShape, x, w, bias, residual, y, slices, threads, clamp })
            } catch (err) {
              t.fail(`${what}: ${(err as Error).message}`)
              continue
            }
            let bad = ''
            for (let j = 0; j < len && !bad; j++) {
              let want = ref.y[j]! + (residual ? residual[j]! : 0)
              if (clamp) want = Math.min(Math.max(want, clamp[0]), clamp[1])
              const tol = tolScale[algo] * (ref.scale[j]! + (residual ? Math.abs(residual[j]!) : 0)) + 1e-30
              if (!(Math.abs(y[j]! - want) <= tol)) bad = `output ${j}: got ${y[j]}, want ${want} (tol ${tol})`
              worst.set(algo, Math.max(worst.get(algo) ?? 0, Math.abs(y[j]! - want) / (ref.scale[j]! + 1e-30)))
            }
            for (let j = len; j < y.length && !bad; j++) if (y[j] !== CANARY) bad = 'canary after y overwritten'
            if (bad) t.fail(`${what}: ${bad}`)
            else checked++
          }
        }
      }
    }
    t.ok(checked > 0, `${checked} runs within tolerance`)
    for (const [algo, r] of worst) t.comment(`${isa} ${algo}: max |error| / S = 2^${Math.log2(r).toFixed(1)}`)
  })
}
