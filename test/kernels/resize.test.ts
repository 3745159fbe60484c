// SPDX-License-Identifier: Apache-2.0
// The specialised Resize paths (native/runtime/resize_run.h) on every ISA this machine runs, against
// the generic reference (resize_f32__ref, run without a workspace): nearest with integer upscales
// 1..16 on W (replication), non-integer scales (gather), every coordinate transformation and nearest
// mode, leading axes resized by nearest; linear with half_pixel, align_corners, asymmetric,
// pytorch_half_pixel, half_pixel_symmetric and tf_crop_and_resize, up- and downscales, sizes,
// exclude_outside; ranks 1, 2, 3, 4, 5; widths {1, 7, 8, 9, 17, 33}. Cases the paths do not handle
// (cubic, interpolated leading axes, extrapolation, a workspace too small) must fall back to the
// reference and leave the same result. Workspaces come from lib/model/ops/nn-resize.ts (sized for 8
// threads) and must equal native resize_fast_workspace_bytes; runs use 1, 2 and 3 threads. X and the
// workspace are misaligned by 4 bytes; canaries around Y and the workspace must stay untouched.
// Tolerances: nearest exact; linear |got - want| <= 2^-20 * max|x| (float weights and arithmetic
// against the double-precision reference).
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { resizeWorkspaceBytes } from '../../lib/model/ops/nn-resize.js'

type PoolOp = (isa: string, name: string, inputs: NativeTensor[], outputs: NativeTensor[], ints: number[],
  floats: number[], threads?: number) => void
const testing = binding()._testing as unknown as {
  isas(): string[]
  poolOp: PoolOp
  resizeWorkspaceBytes(mode: number, outH: number, outW: number, threads: number): number
}
const isas = testing.isas()
const F32 = 1
const U8 = 2
const CANARY = -12345.5
const WS_FILL = 0xab

const coords = ['half_pixel', 'asymmetric', 'pytorch_half_pixel', 'tf_half_pixel_for_nn', 'align_corners',
  'tf_crop_and_resize', 'half_pixel_symmetric']
const nearestModes = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil', 'simple']

interface ResizeCase {
  readonly in: readonly number[]
  /** Scales per axis (out = floor(in * scale)), or sizes per axis. */
  readonly scales?: readonly number[]
  readonly sizes?: readonly number[]
  readonly mode: 0 | 1 | 2
  readonly coord: string
  readonly nearest?: string
  readonly exclude?: boolean
  /** tf_crop_and_resize roi: starts then ends. */
  readonly roi?: readonly number[]
  /** Whether the specialised path must run (it writes its tables into the workspace). */
  readonly fast: boolean
}

const count = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1)

function outDims(c: ResizeCase): number[] {
  return c.in.map((d, i) => c.sizes?.[i] ?? Math.floor(d * c.scales![i]!))
}

/** ints and floats of the native Resize (layout above op_resize in native/runtime/ops/nn_resize.cc). */
function attrs(c: ResizeCase): { ints: number[]; floats: number[] } {
  const rank = c.in.length
  const out = outDims(c)
  const floats = [-0.75, -7]
  c.in.forEach((d, i) => {
    const scale = c.scales?.[i] ?? out[i]! / d
    floats.push(scale, c.scales ? d * scale : out[i]!, c.roi?.[i] ?? 0, c.roi?.[rank + i] ?? 1)
  })
  const ints = [rank, c.mode, coords.indexOf(c.coord), nearestModes.indexOf(c.nearest ?? 'round_prefer_floor'),
    c.exclude ? 1 : 0]
  return { ints, floats }
}

function random(n: number, seed: number): Float32Array {
  const rand = seededRandom(seed)
  const a = new Float32Array(n + 1)
  for (let i = 0; i < a.length; i++) a[i] = rand() * 2 - 1
  return a.subarray(1)
}

interface Run {
  readonly y: Float32Array
  /** Whether the workspace was written (the specialised path ran). */
  readonly usedWorkspace: boolean
}

/** Runs Resize; wsBytes undefined runs without a workspace. Throws when a canary was overwritten. */
function run(isa: string, c: ResizeCase, x: Float32Array, wsBytes?: number, threads = 1): Run {
  const out = outDims(c)
  const n = count(out)
  const buf = new Float32Array(n + 17).fill(CANARY)
  const y = buf.subarray(1, n + 1)
  const outputs: NativeTensor[] = [{ dtype: F32, dims: out, data: y }]
  const wsBuf = new Uint8Array((wsBytes ?? 0) + 68).fill(WS_FILL)
  const ws = wsBuf.subarray(4, 4 + (wsBytes ?? 0))
  if (wsBytes !== undefined) outputs.push({ dtype: U8, dims: [wsBytes], data: ws })
  const { ints, floats } = attrs(c)
  testing.poolOp(isa, 'Resize', [{ dtype: F32, dims: [...c.in], data: x }], outputs, ints, floats, threads)
  if (buf[0] !== CANARY || buf.subarray(n + 1).some((v) => v !== CANARY)) throw new Error(`${isa} wrote outside Y`)
  const tail = wsBuf.subarray(4 + (wsBytes ?? 0))
  if (wsBuf.subarray(0, 4).some((v) => v !== WS_FILL) || tail.some((v) => v !== WS_FILL)) {
    throw new Error(`${isa} wrote outside the workspace`)
  }
  return { y, usedWorkspace: ws.some((v) => v !== WS_FILL) }
}

function firstMismatch(got: Float32Array, want: Float32Array, tol: number): number {
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i]! - want[i]!) <= tol) && got[i] !== want[i]) return i
  }
  return -1
}

/** Every ISA with the nn-resize.ts workspace (1..3 threads) against the generic path; failure messages. */
function checkCase(c: ResizeCase, seed: number): string[] {
  const x = random(count(c.in), seed)
  const tol = c.mode === 0 ? 0 : 2 ** -20 * x.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
  const out = outDims(c)
  const ws = resizeWorkspaceBytes(c.mode, out)
  const what = JSON.stringify({ ...c, out, ws })
  const failures: string[] = []
  const h = out.length >= 2 ? out[out.length - 2]! : 1
  if (ws !== testing.resizeWorkspaceBytes(c.mode, h, out[out.length - 1]!, 8)) failures.push(`workspace size ${what}`)
  const want = run('generic', c, x).y
  for (const isa of isas) {
    for (const threads of seed % 4 === 0 ? [1, 2, 3] : [1]) {
      const got = run(isa, c, x, ws > 0 ? ws : undefined, threads)
      const i = firstMismatch(got.y, want, tol)
      if (i >= 0) failures.push(`${isa} threads=${threads} ${what}: y[${i}] = ${got.y[i]}, want ${want[i]}`)
      if (got.usedWorkspace !== c.fast) failures.push(`${isa} ${what}: specialised path ran = ${got.usedWorkspace}`)
    }
  }
  return failures
}

const nchw = (h: number, w: number, sh: number, sw: number, n = 1, c = 3) => ({ in: [n, c, h, w], scales: [1, 1, sh, sw] })

t.test('nearest integer upscales replicate exactly (every width, scale 1..16)', async (t) => {
  const failures: string[] = []
  let seed = 0
  for (const w of [1, 7, 8, 9, 17, 33]) {
    for (const s of [1, 2, 3, 4, 5, 8, 9, 16]) {
      const c = { ...nchw(3 + (w % 3), w, s === 1 ? 2 : s, s), mode: 0, coord: 'asymmetric', nearest: 'floor', fast: true }
      failures.push(...checkCase(c as ResizeCase, seed++))
    }
  }
  t.same(failures.slice(0, 10), [])
})

t.test('nearest with any scale, coordinate mode and nearest mode gathers exactly', async (t) => {
  const failures: string[] = []
  let seed = 100
  for (const coord of coords) {
    for (const nearest of nearestModes) {
      for (const [sh, sw] of [[1.5, 0.6], [2, 2], [0.5, 3.25], [1, 1.7]]) {
        const roi = coord === 'tf_crop_and_resize' ? [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7] : undefined
        const c = { ...nchw(7, 9 + (seed % 9), sh!, sw!), mode: 0, coord, nearest, roi, fast: true }
        failures.push(...checkCase(c as ResizeCase, seed++))
      }
    }
  }
  t.same(failures.slice(0, 10), [])
})

t.test('linear upscales and downscales blend within 2^-20 of the reference', async (t) => {
  const failures: string[] = []
  let seed = 200
  for (const coord of coords) {
    for (const [sh, sw] of [[2, 2], [4, 4], [8, 8], [0.5, 0.5], [1.5, 0.6], [1, 3], [0.34, 2.5]]) {
      for (const exclude of [false, true]) {
        const roi = coord === 'tf_crop_and_resize' ? [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7] : undefined
        // tf_half_pixel_for_nn maps leading axes (scale 1) to x + 0.5: two taps, so no specialised path.
        const fast = coord !== 'tf_half_pixel_for_nn'
        const c = { ...nchw(5 + (seed % 4), 7 + (seed % 11), sh!, sw!, 1, 2), mode: 1, coord, exclude, roi, fast }
        failures.push(...checkCase(c as ResizeCase, seed++))
      }
    }
  }
  t.same(failures.slice(0, 10), [])
})

t.test('other ranks, sizes and leading axes', async (t) => {
  const cases: ResizeCase[] = [
    { in: [13], scales: [2], mode: 0, coord: 'asymmetric', nearest: 'floor', fast: true },
    { in: [17], scales: [2.5], mode: 1, coord: 'half_pixel', fast: true },
    { in: [5, 7], scales: [2, 3], mode: 0, coord: 'half_pixel', fast: true },
    { in: [5, 9], sizes: [11, 4], mode: 1, coord: 'align_corners', fast: true },
    { in: [3, 5, 7], scales: [1, 2, 2], mode: 1, coord: 'half_pixel', fast: true },
    { in: [1, 2, 3, 4, 5], scales: [1, 1, 2, 2, 2], mode: 0, coord: 'asymmetric', nearest: 'floor', fast: true },
    { in: [2, 3, 4, 5], scales: [2, 0.67, 1, 2], mode: 0, coord: 'half_pixel', fast: true }, // nearest leading axes
    { in: [1, 3, 20, 24], sizes: [1, 3, 160, 192], mode: 0, coord: 'asymmetric', nearest: 'floor', fast: true },
    { in: [1, 2, 40, 37], scales: [1, 1, 0.5, 0.25], mode: 1, coord: 'half_pixel', fast: true },
  ]
  const failures = cases.flatMap((c, i) => checkCase(c, 400 + i * 4))
  t.same(failures.slice(0, 10), [])
})

t.test('cases the specialised paths do not handle fall back to the reference', async (t) => {
  const cases: ResizeCase[] = [
    { in: [1, 4, 5, 6], scales: [1, 2, 1, 1], mode: 1, coord: 'half_pixel', fast: false }, // linear leading axis
    { in: [1, 2, 5, 6], scales: [1, 1, 2, 2], mode: 2, coord: 'half_pixel', fast: false }, // cubic: no workspace
    { in: [1, 2, 6, 7], scales: [1, 1, 2, 2], mode: 1, coord: 'tf_crop_and_resize', fast: false,
      roi: [0, 0, -0.2, 0.1, 1, 1, 1.1, 0.9] }, // extrapolation
    { in: [1, 2, 6, 7], scales: [1, 1, 2, 2], mode: 0, coord: 'tf_crop_and_resize', fast: false,
      roi: [0, 0, 0.1, -0.3, 1, 1, 0.8, 0.9] },
  ]
  t.same(cases.flatMap((c, i) => checkCase(c, 500 + i)), [])
  // A workspace too small for the tables, and one with rows for a single thread run on three.
  const c: ResizeCase = { in: [1, 2, 9, 11], scales: [1, 1, 2, 2], mode: 1, coord: 'half_pixel', fast: true }
  const x = random(count(c.in), 7)
  const want = run('generic', c, x).y
  const oneThread = testing.resizeWorkspaceBytes(1, 18, 22, 1)
  for (const isa of isas) {
    const small = run(isa, c, x, 100)
    t.equal(small.usedWorkspace, false, `${isa}: a 100-byte workspace is not used`)
    t.same(Array.from(small.y), Array.from(want), `${isa}: reference result without a usable workspace`)
    const one = run(isa, c, x, oneThread, 3)
    t.equal(firstMismatch(one.y, want, 2 ** -20), -1, `${isa}: one thread's rows, three threads asked`)
  }
})
