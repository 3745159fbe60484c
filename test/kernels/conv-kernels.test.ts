// SPDX-License-Identifier: Apache-2.0
// Conv kernel variants on every ISA this machine runs, against float64 maths and against `ref`:
// Winograd F(6,3)/F(2,3) input and output transforms (interior, border and fully padded patches,
// 0..8 channels, plane strides wider than the image, output tails of 1..m rows/columns), the 6x16 tile
// GEMM (k = 1, 7, 8, 9, 61, rows 1..6, strides wider than the data), the lean kernels' filter panel
// transform (1, 3 and 17 input channels), depthwise 3x3 stride 1 and 2 (sizes
// 1..33, pads 0..2 on each side, Relu clamp), and the reference im2col in packed-panel layouts.
// Inputs are read through views 4 bytes into their buffers (misaligned); every output array carries a
// canary region that must stay untouched.
// Tolerances: |got - exact| <= k * 2^-20 * S, S = sum of |terms| of that output (k = 4 for transforms and
// depthwise, k = 8 for the GEMM); variants vs ref within the sum of both bounds; im2col is exact.
import t, { type Test } from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding } from '../../lib/native/binding.js'

type Fn = (...args: unknown[]) => unknown
const testing = binding()._testing as unknown as Record<string, Fn> & { isas(): string[] }
const isas = testing.isas()
const ulp20 = 2 ** -20
const CANARY = -12345.5

function random(n: number, seed: number): Float32Array {
  const rand = seededRandom(seed)
  const out = new Float32Array(n + 1)
  for (let i = 0; i < out.length; i++) out[i] = rand() * 2 - 1
  return out.subarray(1) // 4 bytes into its buffer
}

function withCanary(n: number, fill = 0): Float32Array {
  const a = new Float32Array(n + 16).fill(fill)
  a.fill(CANARY, n)
  return a
}

function canaryIntact(a: Float32Array, n: number): boolean {
  for (let i = n; i < a.length; i++) if (a[i] !== CANARY) return false
  return true
}

// Winograd matrices (the maths in native/kernels/winograd/winograd.h).
const BT63 = [
  [1, 0, -21 / 4, 0, 21 / 4, 0, -1, 0],
  [0, 1, 1, -17 / 4, -17 / 4, 1, 1, 0],
  [0, -1, 1, 17 / 4, -17 / 4, -1, 1, 0],
  [0, 1 / 2, 1 / 4, -5 / 2, -5 / 4, 2, 1, 0],
  [0, -1 / 2, 1 / 4, 5 / 2, -5 / 4, -2, 1, 0],
  [0, 2, 4, -5 / 2, -5, 1 / 2, 1, 0],
  [0, -2, 4, 5 / 2, -5, -1 / 2, 1, 0],
  [0, -1, 0, 21 / 4, 0, -21 / 4, 0, 1],
]
const AT63 = [
  [1, 1, 1, 1, 1, 32, 32, 0],
  [0, 1, -1, 2, -2, 16, -16, 0],
  [0, 1, 1, 4, 4, 8, 8, 0],
  [0, 1, -1, 8, -8, 4, -4, 0],
  [0, 1, 1, 16, 16, 2, 2, 0],
  [0, 1, -1, 32, -32, 1, -1, 1],
]
const BT23 = [
  [1, 0, -1, 0],
  [0, 1, 1, 0],
  [0, -1, 1, 0],
  [0, 1, 0, -1],
]
const AT23 = [
  [1, 1, 1, 0],
  [0, 1, -1, -1],
]

/** value[r][c] = sum_ij L[r][i] X[i][j] L[c][j] and the same with absolute values (the error scale). */
function sandwich(L: number[][], X: (i: number, j: number) => number): { v: number[][]; s: number[][] } {
  const n = L.length
  const a = L[0]!.length
  const v: number[][] = []
  const s: number[][] = []
  for (let r = 0; r < n; r++) {
    v.push([])
    s.push([])
    for (let c = 0; c < n; c++) {
      let sum = 0
      let abs = 0
      for (let i = 0; i < a; i++) {
        for (let j = 0; j < a; j++) {
          const term = L[r]![i]! * X(i, j) * L[c]![j]!
          sum += term
          abs += Math.abs(term)
        }
      }
      v[r]!.push(sum)
      s[r]!.push(abs)
    }
  }
  return { v, s }
}

for (const variant of [63, 23] as const) {
  const alpha = variant === 63 ? 8 : 4
  const BT = variant === 63 ? BT63 : BT23
  const AT = variant === 63 ? AT63 : AT23
  const mt = alpha - 2

  t.test(`winograd F(${variant === 63 ? 6 : 2},3) input transform: every ISA matches float64 and ref`, async (t) => {
    const cases: Array<[number, number, number, number]> = [] // h, w, iy, ix
    for (const [h, w] of [[1, 1], [alpha - 1, alpha], [alpha, alpha + 1], [13, 17]] as const) {
      for (const iy of [-2, -1, 0, h - alpha, h - 1, h + 1]) for (const ix of [-2, 0, w - alpha, w - 3, w + 2]) cases.push([h, w, iy, ix])
    }
    let checked = 0
    for (const [h, w, iy, ix] of cases) {
      for (const nc of [0, 1, 7, 8]) {
        const plane = h * w + 3
        const x = random(8 * plane, h * 131 + w * 17 + nc)
        const vStride = 13
        const vLen = (alpha * alpha - 1) * vStride + 8
        const px = (l: number, i: number, j: number) => {
          const y = iy + i
          const xx = ix + j
          return l < nc && y >= 0 && y < h && xx >= 0 && xx < w ? x[l * plane + y * w + xx]! : 0
        }
        const got: Record<string, Float32Array> = {}
        for (const isa of isas) {
          const v = withCanary(vLen, NaN)
          testing.convWinogradInput!(isa, variant, { x, plane, h, w, iy, ix, nc, v, vStride })
          t.ok(canaryIntact(v, vLen), `${isa} input canary h=${h} w=${w} iy=${iy} ix=${ix} nc=${nc}`)
          got[isa] = v
        }
        for (let l = 0; l < 8; l++) {
          const { v, s } = sandwich(BT, (i, j) => px(l, i, j))
          for (let xi = 0; xi < alpha * alpha; xi++) {
            const want = v[Math.floor(xi / alpha)]![xi % alpha]!
            const tol = 4 * ulp20 * s[Math.floor(xi / alpha)]![xi % alpha]!
            for (const isa of isas) {
              const g = got[isa]![xi * vStride + l]!
              if (!(Math.abs(g - want) <= tol)) {
                t.fail(`${isa} F(${variant}) input h=${h} w=${w} iy=${iy} ix=${ix} nc=${nc} lane=${l} xi=${xi}: got ${g}, want ${want} (tol ${tol})`)
                return
              }
              checked++
            }
          }
        }
      }
    }
    t.ok(checked > 0, `${checked} transformed values within tolerance`)
  })

  t.test(`winograd F(${variant === 63 ? 6 : 2},3) output transform: every ISA matches float64 and ref`, async (t) => {
    let checked = 0
    for (const rows of [1, mt - 1, mt]) {
      for (const cols of [1, mt - 1, mt]) {
        for (const nc of [1, 5, 8]) {
          for (const clamp of [undefined, [-0.5, 2] as [number, number]]) {
            const mStride = 19
            const m = random((alpha * alpha - 1) * mStride + 8, rows * 7 + cols * 3 + nc)
            const bias = random(nc, 99 + nc)
            const w = mt + 3 // row stride wider than a whole tile row
            const plane = mt * w + 5 // whole tiles never overlap the next channel, so untouched cells stay 7
            const yLen = (nc - 1) * plane + (rows - 1) * w + cols
            const outs: Record<string, Float32Array> = {}
            for (const isa of isas) {
              const y = withCanary(yLen, 7)
              testing.convWinogradOutput!(isa, variant, { m, mStride, bias, y, plane, w, rows, cols, nc, clamp })
              t.ok(canaryIntact(y, yLen), `${isa} output canary rows=${rows} cols=${cols} nc=${nc}`)
              outs[isa] = y
            }
            for (let l = 0; l < nc; l++) {
              const { v, s } = sandwich(AT, (i, j) => m[(i * alpha + j) * mStride + l]!)
              for (let r = 0; r < mt; r++) {
                for (let c = 0; c < mt; c++) {
                  const at = l * plane + r * w + c
                  let want = v[r]![c]! + bias[l]!
                  if (clamp) want = Math.min(Math.max(want, clamp[0]), clamp[1])
                  const tol = 4 * ulp20 * (s[r]![c]! + Math.abs(bias[l]!))
                  for (const isa of isas) {
                    const g = outs[isa]![at]!
                    const ok = r < rows && c < cols ? Math.abs(g - want) <= tol : at >= yLen || g === 7
                    if (!ok) {
                      t.fail(`${isa} F(${variant}) output rows=${rows} cols=${cols} nc=${nc} clamp=${clamp} l=${l} r=${r} c=${c}: got ${g}, want ${r < rows && c < cols ? want : 'untouched'}`)
                      return
                    }
                    checked++
                  }
                }
              }
            }
          }
        }
      }
    }
    t.ok(checked > 0, `${checked} output pixels within tolerance, the rest untouched`)
  })
}

t.test('winograd tile GEMM 6x16: every ISA matches float64', async (t) => {
  let checked = 0
  for (const k of [1, 7, 8, 9, 61]) {
    for (const rows of [1, 2, 5, 6]) {
      const aStride = k + 3
      const dStride = 21
      const a = random((rows - 1) * aStride + k, k * 10 + rows)
      const b = random(k * 16, k + 1000)
      for (const isa of isas) {
        const dLen = (rows - 1) * dStride + 16
        const d = withCanary(dLen, NaN)
        testing.convWinogradGemm!(isa, { k, a, aStride, b, d, dStride, rows })
        t.ok(canaryIntact(d, dLen), `${isa} gemm canary k=${k} rows=${rows}`)
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < 16; j++) {
            let want = 0
            let s = 0
            for (let c = 0; c < k; c++) {
              want += a[i * aStride + c]! * b[c * 16 + j]!
              s += Math.abs(a[i * aStride + c]! * b[c * 16 + j]!)
            }
            const g = d[i * dStride + j]!
            if (!(Math.abs(g - want) <= 8 * ulp20 * s)) {
              t.fail(`${isa} gemm k=${k} rows=${rows} i=${i} j=${j}: got ${g}, want ${want}`)
              return
            }
            checked++
          }
        }
      }
    }
  }
  t.ok(checked > 0, `${checked} GEMM outputs within tolerance`)
})

// The lean kernels' run-time filter transform, G g Gᵀ per (output channel lane, input channel), from the
// narrow GEMM's panel layout into U's; G as in native/kernels/winograd/winograd_f32_f63__ref.cc.
const G63 = [
  [1, 0, 0],
  [-2 / 9, -2 / 9, -2 / 9],
  [-2 / 9, 2 / 9, -2 / 9],
  [1 / 90, 1 / 45, 2 / 45],
  [1 / 90, -1 / 45, 2 / 45],
  [1 / 45, 1 / 90, 1 / 180],
  [1 / 45, -1 / 90, 1 / 180],
  [0, 0, 1],
]
const G23 = [
  [1, 0, 0],
  [1 / 2, 1 / 2, 1 / 2],
  [1 / 2, -1 / 2, 1 / 2],
  [0, 0, 1],
]

for (const variant of [63, 23] as const) {
  t.test(`winograd F(${variant === 63 ? 6 : 2},3) filter panel transform: every ISA matches float64`, async (t) => {
    const G = variant === 63 ? G63 : G23
    const alpha = G.length
    let checked = 0
    for (const C of [1, 3, 17]) {
      const a = random(C * 9 * 16, C * 31 + variant)
      for (const isa of isas) {
        const n = alpha * alpha * C * 16
        const u = withCanary(n, NaN)
        testing.convWinogradFilterPanel!(isa, variant, { a, C, u })
        t.ok(canaryIntact(u, n), `${isa} filter panel canary C=${C}`)
        for (let c = 0; c < C; c++) {
          for (let lane = 0; lane < 16; lane++) {
            const { v, s } = sandwich(G, (i, j) => a[(c * 9 + i * 3 + j) * 16 + lane]!)
            for (let r = 0; r < alpha; r++) {
              for (let q = 0; q < alpha; q++) {
                const got = u[((r * alpha + q) * C + c) * 16 + lane]!
                if (!(Math.abs(got - v[r]![q]!) <= 4 * ulp20 * s[r]![q]!)) {
                  t.fail(`${isa} C=${C} c=${c} lane=${lane} xi=${r * alpha + q}: got ${got}, want ${v[r]![q]}`)
                  return
                }
                checked++
              }
            }
          }
        }
      }
    }
    t.ok(checked > 0, `${checked} transformed taps within tolerance`)
  })
}

// Planes up to 33x33 take the SIMD variants' zero-padded copy; the 130x131 ones (more than the 16384
// padded floats of kernels/depthwise/depthwise_padded.h) their in-place path with scalar borders.
// 112x112 and 57x45 at stride 2 take the split copy over many bands of output rows (AVX2: 8 rows per band).
// AVX-512: stride 1 with pads 1 on rows of 12 or more columns is one flat run of masked steps that cross
// rows (12, 13, 14, 17, 33 wide; 14x14 and 28x28 as in MobileNetV2), also for the bands of rows
// ConvDepthwise passes (top pad 0 or 1, bottom pad 0 or 1: pads [0, 1, 0, 1], [1, 1, 0, 1], [0, 1, 1, 1]);
// stride 2 with more than 8 output columns is by rows (w >= 17), the rest the AVX2 variant. Odd-height
// planes write their outputs yPlane = oh * ow + 5 floats apart (bands of rows of a larger plane), the
// gaps checked untouched.
const depthwisePlanes: Array<[number, number]> = []
for (const h of [1, 2, 3, 8, 9, 17]) for (const w of [1, 2, 3, 7, 8, 9, 12, 13, 16, 17, 33]) depthwisePlanes.push([h, w])
depthwisePlanes.push([130, 131], [131, 130], [112, 112], [57, 45], [14, 14], [28, 28])

/**
 * Runs planes [p0, p1) of 2 x channels planes (two images) of every shape on every ISA and checks them
 * against float64; returns the number of outputs checked (0 after the first failure).
 */
function checkDepthwise(
  t: Test, planesOf: ReadonlyArray<[number, number]>, channels: number, p0: number, p1: number,
  kernel: { kh: number; kw: number; dilation: number; pads?: ReadonlyArray<readonly [number, number, number, number]> } | undefined = undefined,
): number {
  let checked = 0
  const kh = kernel?.kh ?? 3
  const kw = kernel?.kw ?? 3
  const d = kernel?.dilation ?? 1
  const padSets = kernel?.pads ?? [[0, 0, 0, 0], [1, 1, 1, 1], [2, 0, 1, 2], [0, 2, 2, 1], [0, 1, 0, 1], [1, 1, 0, 1], [0, 1, 1, 1]]
  for (const stride of [1, 2]) {
    for (const [h, w] of planesOf) {
      for (const [pt, pl, pb, pr] of padSets) {
        const oh = Math.floor((h + pt + pb - ((kh - 1) * d + 1)) / stride) + 1
        const ow = Math.floor((w + pl + pr - ((kw - 1) * d + 1)) / stride) + 1
        if (oh < 1 || ow < 1) continue
        const planes = 2 * channels
        const x = random(planes * h * w, h * 1000 + w * 10 + stride)
        const wt = random(channels * kh * kw, 5 + w)
        const bias = random(channels, 6 + h)
        const clamp: [number, number] | undefined = (h + w) % 2 ? [0, Infinity] : undefined
        const yPlane = h % 2 === 1 ? oh * ow + 5 : oh * ow
        const shape = { channels, h, w, oh, ow, stride, pt, pl, ...(yPlane === oh * ow ? {} : { yPlane }), ...(kernel ? { kh, kw, dilation: d } : {}) }
        const yLen = planes * yPlane
        for (const isa of isas) {
          const y = withCanary(yLen, NaN)
          testing.convDepthwise!(isa, { shape, x, w: wt, bias, y, clamp, p0, p1, ...(kernel ? { kxk: 1 } : {}) })
          t.ok(canaryIntact(y, yLen), `${isa} depthwise canary s=${stride} h=${h} w=${w} pads=${[pt, pl, pb, pr]}`)
          let untouched = true
          for (let p = 0; p < planes; p++) {
            for (let i = 0; i < yPlane; i++) {
              const inRange = p >= p0 && p < p1 && i < oh * ow
              if (!inRange && !Number.isNaN(y[p * yPlane + i]!)) untouched = false
            }
          }
          t.ok(untouched, `${isa} depthwise leaves the gaps between output planes and the planes outside [${p0}, ${p1}) alone s=${stride} h=${h} w=${w} pads=${[pt, pl, pb, pr]}`)
          for (let p = p0; p < p1; p++) {
            const c = p % channels
            for (let oy = 0; oy < oh; oy++) {
              for (let ox = 0; ox < ow; ox++) {
                let want = bias[c]!
                let s = Math.abs(bias[c]!)
                for (let ky = 0; ky < kh; ky++) {
                  for (let kx = 0; kx < kw; kx++) {
                    const iy = oy * stride - pt + ky * d
                    const ix = ox * stride - pl + kx * d
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue
                    const term = wt[(c * kh + ky) * kw + kx]! * x[(p * h + iy) * w + ix]!
                    want += term
                    s += Math.abs(term)
                  }
                }
                if (clamp) want = Math.max(want, 0)
                const g = y[p * yPlane + oy * ow + ox]!
                if (!(Math.abs(g - want) <= 4 * ulp20 * s)) {
                  t.fail(`${isa} depthwise ${kh}x${kw} d=${d} s=${stride} h=${h} w=${w} pads=${[pt, pl, pb, pr]} p=${p} oy=${oy} ox=${ox}: got ${g}, want ${want}`)
                  return 0
                }
                checked++
              }
            }
          }
        }
      }
    }
  }
  return checked
}

t.test('depthwise 3x3 stride 1 and 2: every ISA matches float64', async (t) => {
  const checked = checkDepthwise(t, depthwisePlanes, 3, 0, 6)
  t.ok(checked > 0, `${checked} depthwise outputs within tolerance`)
})

// AVX-512 computes planes of at most 16 columns 16 channels at a time (transposed into 16-channel
// pixels): whole blocks of 16 planes, the rest of the range as above. 20 channels over two images, the
// range [3, 40): blocks [3, 19) and [19, 35) (the second crosses into the second image, so its channels
// wrap), then 5 planes alone; planes 0-2 must stay untouched.
t.test('depthwise 3x3 on small planes, 16 channels at a time: every ISA matches float64', async (t) => {
  const small: Array<[number, number]> = [[14, 14], [7, 7], [16, 16], [3, 5], [1, 16], [16, 1], [9, 12], [15, 13]]
  const checked = checkDepthwise(t, small, 20, 3, 40)
  t.ok(checked > 0, `${checked} depthwise outputs within tolerance`)
})

// depthwise_kxk (MnasNet's and EfficientNet's 5x5, ConvNeXt's 7x7, DeepLabV3's dilated 3x3, a 3x5): planes up
// to 56x56 take the zero-padded copy, 131x130 (more than 16384 padded floats) the in-place path with
// scalar borders; rows narrower than a vector (1..7 columns) store through a buffer, and with 16 planes
// or more in the range, rows of at most two vectors go with the channels in the lanes, in bands of
// output rows when the whole zero-padded tile would not fit (60x30, and 56x56 at stride 2).
t.test('depthwise kxk (5x5, 7x7, 3x3 dilated 2, 3x5) stride 1 and 2: every ISA matches float64', async (t) => {
  const planes: Array<[number, number]> = [[1, 1], [3, 5], [5, 5], [7, 7], [9, 17], [14, 14], [17, 33], [28, 28], [60, 30], [56, 56], [131, 130]]
  for (const [kh, kw, dilation] of [[5, 5, 1], [7, 7, 1], [3, 3, 2], [3, 5, 1], [5, 5, 2]] as const) {
    const pads = [[0, 0, 0, 0], [(kh - 1) * dilation / 2, (kw - 1) * dilation / 2, (kh - 1) * dilation / 2, (kw - 1) * dilation / 2], [1, 2, 2, 1], [2, 0, 0, 3]] as const
    const padList = pads.map((q) => q.map(Math.floor) as unknown as readonly [number, number, number, number])
    const checked = checkDepthwise(t, planes, 3, 0, 6, { kh, kw, dilation, pads: padList })
    t.ok(checked > 0, `${kh}x${kw} dilation ${dilation}: ${checked} outputs within tolerance`)
    // Small planes over 20 channels, planes [3, 40): whole groups of 16 (and 8, 4) planes with the
    // channels in the lanes, one crossing from the first image into the second, and 5 left over.
    const grouped = checkDepthwise(t, planes.slice(0, 10), 20, 3, 40, { kh, kw, dilation, pads: padList })
    t.ok(grouped > 0, `${kh}x${kw} dilation ${dilation}, channels in lanes: ${grouped} outputs within tolerance`)
  }
})

t.test('im2col writes the packed column panels exactly on every ISA', async (t) => {
  const shapes = [
    { c: 2, h: 5, w: 7, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1 },
    { c: 3, h: 9, w: 8, kh: 3, kw: 2, sh: 2, sw: 3, dh: 1, dw: 2, pt: 0, pl: 2, pb: 2, pr: 1 },
    { c: 1, h: 4, w: 13, kh: 1, kw: 7, sh: 1, sw: 1, dh: 2, dw: 1, pt: 0, pl: 3, pb: 0, pr: 3 },
    // Rows wide enough for the vector steps: stride 1 and 2 (stems), odd and even widths, a row
    // whose last stride-2 step would read past its end.
    { c: 2, h: 6, w: 37, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1 },
    { c: 3, h: 7, w: 41, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1 },
    { c: 1, h: 5, w: 34, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 0, pl: 0, pb: 0, pr: 0 },
    { c: 2, h: 9, w: 40, kh: 7, kw: 7, sh: 2, sw: 2, dh: 1, dw: 1, pt: 3, pl: 3, pb: 3, pr: 3 },
  ]
  let checked = 0
  for (const sh of shapes) {
    const oh = Math.floor((sh.h + sh.pt + sh.pb - ((sh.kh - 1) * sh.dh + 1)) / sh.sh) + 1
    const ow = Math.floor((sh.w + sh.pl + sh.pr - ((sh.kw - 1) * sh.dw + 1)) / sh.sw) + 1
    const shape = { ...sh, m: 1, oh, ow }
    const x = random(sh.c * sh.h * sh.w, oh * 31 + ow)
    const K = sh.c * sh.kh * sh.kw
    for (const isa of isas) for (const nr of [1, 6, 16, 1000]) {
      for (const [p0, p1] of [[0, oh * ow], [1, oh * ow - 1], [ow + 2, ow + 5]] as const) {
        const len = Math.ceil((p1 - p0) / nr) * K * nr
        const col = withCanary(len, NaN)
        testing.convIm2col!({ shape, channels: sh.c, x, p0, p1, nr, col, isa })
        t.ok(canaryIntact(col, len), `${isa} im2col canary ${JSON.stringify(sh)} nr=${nr} p=[${p0}, ${p1})`)
        for (let k = 0; k < K; k++) {
          const kw = k % sh.kw
          const kh = Math.floor(k / sh.kw) % sh.kh
          const c = Math.floor(k / (sh.kw * sh.kh))
          for (let p = p0; p < p1; p++) {
            const iy = Math.floor(p / ow) * sh.sh - sh.pt + kh * sh.dh
            const ix = (p % ow) * sh.sw - sh.pl + kw * sh.dw
            const want = iy >= 0 && iy < sh.h && ix >= 0 && ix < sh.w ? x[(c * sh.h + iy) * sh.w + ix]! : 0
            const j = p - p0
            const g = col[Math.floor(j / nr) * K * nr + k * nr + (j % nr)]!
            if (g !== want) {
              t.fail(`${isa} im2col ${JSON.stringify(sh)} nr=${nr} p=[${p0}, ${p1}) k=${k} p=${p}: got ${g}, want ${want}`)
              return
            }
            checked++
          }
        }
      }
    }
  }
  t.ok(checked > 0, `${checked} column entries exact`)
})
