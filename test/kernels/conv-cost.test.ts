// SPDX-License-Identifier: Apache-2.0
// The TS cost model (lib/model/ops/conv-cost.ts) against the native one (runtime/conv_cost.cc) on random
// shapes, for every ISA's GEMM blocking: exactly equal with the ISA's blocking, and the default (the bound
// over every ISA) never below. Then the Conv op itself: the workspace it requests is what it needs (it runs
// with exactly conv_cost bytes for one thread and refuses one byte less), and the encoding nn-conv.ts
// produces (algorithm, slices, prepacked Winograd filter, workspace for maxKernelThreads) matches the
// direct algorithm within the tolerances of conv-algos.test.ts.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { chooseConvKernel, convWeightTransform, defaultConvSlices } from '../../lib/model/ops/nn-conv.js'
import { maxKernelThreads } from '../../lib/model/ops/nn-matmul.js'
import { convAlgoCode, convApplies, convCost, type ConvCost, type ConvKernel, type ConvShape, type GemmBlocking } from '../../lib/model/ops/conv-cost.js'

type Fn = (...args: unknown[]) => unknown
const native = binding()
const testing = native._testing as unknown as Record<string, Fn> & { isas(): string[] }
const isas = testing.isas()
const kernels: ConvKernel[] = ['direct', 'im2col', 'gemm1x1', 'winograd63', 'winograd23', 'depthwise', 'narrow', 'winograd63_lean', 'winograd23_lean', 'grouped', 'taps']

function nativeShape(s: ConvShape) {
  return {
    n: s.batch, c: s.inChannels, m: s.outChannels, group: s.group, h: s.in[1], w: s.in[2], oh: s.out[1], ow: s.out[2],
    kh: s.kernel[1], kw: s.kernel[2], sh: s.stride[1], sw: s.stride[2], dh: s.dilation[1], dw: s.dilation[2], pt: s.pad[1], pl: s.pad[2],
  }
}

function randomShape(rand: () => number): ConvShape {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  const k = pick([1, 1, 3, 3, 3, 5, 7])
  const depthwise = k === 3 && rand() < 0.25
  const group = depthwise ? 0 : pick([1, 1, 1, 2, 4])
  const c = depthwise ? pick([8, 32, 144]) : group * pick([1, 3, 16, 17, 64, 256, 1024])
  const m = depthwise ? c : group * pick([1, 8, 24, 64, 130])
  const stride = pick([1, 1, 2])
  const pad = k === 1 ? 0 : pick([0, Math.floor(k / 2)])
  const h = pick([1, 7, 14, 28, 56, 113])
  const w = pick([1, 9, 14, 56, 100])
  const out = (len: number) => Math.floor((len + 2 * pad - k) / stride) + 1
  return {
    batch: pick([1, 1, 2, 3]), inChannels: c, outChannels: m, group: depthwise ? c : group,
    in: [1, h, w], out: [1, Math.max(1, out(h)), Math.max(1, out(w))], kernel: [1, k, k],
    stride: [1, stride, stride], dilation: [1, 1, 1], pad: [0, pad, pad],
  }
}

t.test('convCost equals the native conv_cost for every ISA blocking and bounds it by default', async (t) => {
  const rand = seededRandom(2024)
  const blockings = Object.fromEntries(isas.map((isa) => [isa, testing.gemmInfo!(isa) as GemmBlocking]))
  let compared = 0
  for (let i = 0; i < 400; i++) {
    const s = randomShape(rand)
    for (const kernel of kernels) {
      if (!convApplies(kernel, s)) continue
      for (const slices of [1, 2, 7, 100]) {
        for (const threads of [1, 2, 8]) {
          const bound = convCost(kernel, s, slices, { threads })
          for (const isa of isas) {
            const want = testing.convCost!(isa, kernel, nativeShape(s), slices, threads) as ConvCost
            const got = convCost(kernel, s, slices, { threads, gemm: blockings[isa] })
            const what = `${isa} ${kernel} slices=${slices} threads=${threads} ${JSON.stringify(s)}`
            if (got.workspaceBytes !== want.workspaceBytes || got.flops !== want.flops || got.weightBytes !== want.weightBytes) {
              t.fail(`${what}: TS ${JSON.stringify(got)} != native ${JSON.stringify(want)}`)
              return
            }
            if (bound.workspaceBytes < want.workspaceBytes) {
              t.fail(`${what}: bound ${bound.workspaceBytes} < native ${want.workspaceBytes}`)
              return
            }
            compared++
          }
        }
      }
    }
  }
  t.ok(compared > 1000, `${compared} (shape, algorithm, slices, threads, ISA) costs agree`)
})

const f32 = (dims: number[], data: Float32Array): NativeTensor => ({ dtype: 1, dims, data })

function random(n: number, seed: number): Float32Array {
  const rand = seededRandom(seed)
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) out[i] = rand() * 2 - 1
  return out
}

/** The weight as `kernel` reads it: transformed (Winograd), in 16-channel panels (narrow), packed by group (grouped) or raw. */
function weightForm(kernel: ConvKernel, w: NativeTensor, group: number): NativeTensor {
  const transform = convWeightTransform(kernel)
  if (transform === undefined) return w
  const r = native.prepack(transform, w, kernel === 'grouped' ? [group] : [])
  return f32(r.dims, new Float32Array(r.data))
}

/** Runs the native Conv op on a 2-D shape with the given algorithm, slices and workspace bytes. */
function runConv(s: ConvShape, kernel: ConvKernel, slices: number, wsBytes: number, threads: number, seed: number): Float32Array {
  const [kh, kw] = [s.kernel[1], s.kernel[2]]
  const cg = s.inChannels / s.group
  const x = random(s.batch * s.inChannels * s.in[1] * s.in[2], seed)
  const w = weightForm(kernel, f32([s.outChannels, cg, kh, kw], random(s.outChannels * cg * kh * kw, seed + 1)), s.group)
  const bias = random(s.outChannels, seed + 2)
  const y = new Float32Array(s.batch * s.outChannels * s.out[1] * s.out[2])
  const outs: NativeTensor[] = [f32([s.batch, s.outChannels, s.out[1], s.out[2]], y)]
  if (wsBytes > 0) outs.push({ dtype: 2, dims: [wsBytes], data: new Uint8Array(wsBytes) })
  const padEnd = (i: 1 | 2) => (s.out[i] - 1) * s.stride[i] + (s.kernel[i] - 1) * s.dilation[i] + 1 - s.in[i] - s.pad[i]
  const ints = [s.group, 2, kh, kw, s.stride[1], s.stride[2], s.dilation[1], s.dilation[2], s.pad[1], s.pad[2], padEnd(1), padEnd(2),
    convAlgoCode[kernel], slices, 0]
  native.runOp('Conv', [f32([s.batch, s.inChannels, s.in[1], s.in[2]], x), w, f32([s.outChannels], bias)], outs, ints, [], threads)
  return y
}

function maxRelDiff(a: Float32Array, b: Float32Array): number {
  let m = 0
  let scale = 0
  for (let i = 0; i < a.length; i++) {
    m = Math.max(m, Math.abs(a[i]! - b[i]!))
    scale = Math.max(scale, Math.abs(b[i]!))
  }
  return m / Math.max(scale, 1e-30)
}

const opShapes: ConvShape[] = [
  { batch: 1, inChannels: 32, outChannels: 40, group: 1, in: [1, 20, 19], out: [1, 20, 19], kernel: [1, 3, 3], stride: [1, 1, 1], dilation: [1, 1, 1], pad: [0, 1, 1] },
  { batch: 2, inChannels: 8, outChannels: 8, group: 1, in: [1, 9, 9], out: [1, 9, 9], kernel: [1, 3, 3], stride: [1, 1, 1], dilation: [1, 1, 1], pad: [0, 1, 1] },
  { batch: 1, inChannels: 48, outChannels: 24, group: 1, in: [1, 14, 14], out: [1, 14, 14], kernel: [1, 1, 1], stride: [1, 1, 1], dilation: [1, 1, 1], pad: [0, 0, 0] },
  { batch: 1, inChannels: 16, outChannels: 16, group: 16, in: [1, 15, 15], out: [1, 8, 8], kernel: [1, 3, 3], stride: [1, 2, 2], dilation: [1, 1, 1], pad: [0, 1, 1] },
  { batch: 1, inChannels: 3, outChannels: 16, group: 1, in: [1, 33, 31], out: [1, 16, 15], kernel: [1, 3, 3], stride: [1, 2, 2], dilation: [1, 1, 1], pad: [0, 0, 0] },
]

t.test('the Conv op runs with exactly conv_cost bytes and refuses fewer', async (t) => {
  for (const s of opShapes) {
    for (const kernel of kernels) {
      if (!convApplies(kernel, s)) continue
      const slices = kernel === 'im2col' || kernel === 'gemm1x1' || kernel === 'narrow' ? 3 : 2
      const exact = (testing.convCost!(native.info().isa, kernel, nativeShape(s), slices, 1) as ConvCost).workspaceBytes
      if (exact === 0) continue
      t.doesNotThrow(() => runConv(s, kernel, slices, exact, 2, 7), `${kernel} runs with ${exact} bytes ${JSON.stringify(s)}`)
      t.throws(() => runConv(s, kernel, slices, exact - 1, 2, 7), /workspace/, `${kernel} refuses ${exact - 1} bytes`)
    }
  }
})

t.test('the Conv encoding of nn-conv.ts matches the direct algorithm', async (t) => {
  for (const s of opShapes) {
    const want = runConv(s, 'direct', 1, 0, 1, 11)
    const kernel = chooseConvKernel(s, true)
    const slices = defaultConvSlices(kernel, s)
    const ws = convCost(kernel, s, slices, { threads: maxKernelThreads }).workspaceBytes
    for (const threads of [1, 2]) {
      const got = runConv(s, kernel, slices, ws, threads, 11)
      const tol = kernel === 'winograd63' ? 2 ** -12 : 2 ** -18
      t.ok(maxRelDiff(got, want) <= tol, `${kernel} (slices ${slices}, ${ws} bytes, ${threads} threads) ${JSON.stringify(s)}: max rel diff ${maxRelDiff(got, want)}`)
    }
  }
})

t.test('a fused Relu/Clip reaches the Conv kernels as a clamp epilogue', async (t) => {
  const { opDef } = await import('../../lib/model/ops/registry.js')
  const { fusedMaxAttr, fusedMinAttr } = await import('../../lib/model/fuse-activations.js')
  const s = opShapes[0]!
  const wData = random(s.outChannels * s.inChannels * 9, 5)
  const node = {
    name: 'conv', opType: 'Conv', domain: '', inputs: ['x', 'w'], outputs: ['y'],
    attrs: new Map<string, number | number[]>([['pads', [1, 1, 1, 1]], [fusedMinAttr, -0.25], [fusedMaxAttr, 0.5]]),
  }
  const ctx = {
    node, opset: 17,
    inputs: [
      { dtype: 'float32' as const, dims: [1, s.inChannels, s.in[1], s.in[2]] },
      { dtype: 'float32' as const, dims: [s.outChannels, s.inChannels, 3, 3], tensor: { dtype: 'float32' as const, dims: [s.outChannels, s.inChannels, 3, 3], data: wData } },
    ],
  }
  const call = opDef('Conv')!.infer(ctx as never).kernel!()
  t.equal(call.ints[call.ints.length - 1], 2, 'act = Clip')
  t.strictSame(call.floats, [-0.25, 0.5], 'with the fused bounds')
  // The native op applies it for every algorithm that computes this shape.
  const x = f32([1, s.inChannels, s.in[1], s.in[2]], random(s.inChannels * s.in[1] * s.in[2], 6))
  for (const kernel of kernels.filter((k) => convApplies(k, s))) {
    const w = weightForm(kernel, f32([s.outChannels, s.inChannels, 3, 3], wData), 1)
    const ws = convCost(kernel, s, 2, { threads: maxKernelThreads }).workspaceBytes
    const run = (act: number, floats: number[]): Float32Array => {
      const y = new Float32Array(s.outChannels * s.out[1] * s.out[2])
      const outs: NativeTensor[] = [f32([1, s.outChannels, s.out[1], s.out[2]], y)]
      if (ws > 0) outs.push({ dtype: 2, dims: [ws], data: new Uint8Array(ws) })
      const ints = [...call.ints.slice(0, -3), convAlgoCode[kernel], 2, act]
      native.runOp('Conv', [x, w, null], outs, ints, floats, 2)
      return y
    }
    const plain = run(0, [])
    const clip = run(2, [-0.25, 0.5])
    const relu = run(1, [])
    let bad = 0
    for (let i = 0; i < plain.length; i++) {
      if (clip[i] !== Math.min(Math.max(plain[i]!, -0.25), 0.5)) bad++
      if (relu[i] !== Math.max(plain[i]!, 0)) bad++
    }
    t.equal(bad, 0, `${kernel}: Clip and Relu epilogues equal clamping the plain output`)
  }
})

t.test('conv_narrow_filter: 16-channel panels, the shape formShape predicts, and typed refusals', async (t) => {
  const { formShape } = await import('../../lib/model/forms.js')
  for (const dims of [[20, 3, 3, 3], [16, 5, 7], [33, 2, 1, 2, 3]]) {
    const n = dims.reduce((a, b) => a * b, 1)
    const data = random(n, dims.length)
    const r = native.prepack('conv_narrow_filter', f32(dims, data), [])
    t.strictSame(r.dims, formShape('float32', dims, '#conv_narrow_filter()', 16)!.dims, `dims of ${JSON.stringify(dims)}`)
    const k = n / dims[0]!
    const packed = new Float32Array(r.data)
    let bad = 0
    for (let m = 0; m < r.dims[0]! * 16; m++) {
      for (let p = 0; p < k; p++) {
        const want = m < dims[0]! ? data[m * k + p] : 0
        if (packed[Math.floor(m / 16) * k * 16 + p * 16 + (m % 16)] !== want) bad++
      }
    }
    t.equal(bad, 0, `${JSON.stringify(dims)}: A(m, p) at panel m / 16, row p, lane m % 16; zero past M`)
  }
  t.throws(() => native.prepack('conv_narrow_filter', f32([4, 4], new Float32Array(16)), []), /float32 \[M, C, kernel\.\.\.\]/, 'a rank-2 weight')
  t.throws(() => native.prepack('conv_narrow_filter', f32([4, 4, 1], new Float32Array(16)), [1]), /expected no ints/, 'ints')
  // The Conv op refuses a raw filter for narrow, saying which form it needs.
  const s = opShapes[0]!
  const ws = convCost('narrow', s, 1, { threads: 1 }).workspaceBytes
  const raw = f32([s.outChannels, s.inChannels, 3, 3], random(s.outChannels * s.inChannels * 9, 3))
  const outs: NativeTensor[] = [f32([1, s.outChannels, s.out[1], s.out[2]], new Float32Array(s.outChannels * s.out[1] * s.out[2])), { dtype: 2, dims: [ws], data: new Uint8Array(ws) }]
  const ints = [1, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, convAlgoCode.narrow, 1, 0]
  const x = f32([1, s.inChannels, s.in[1], s.in[2]], random(s.inChannels * s.in[1] * s.in[2], 4))
  t.throws(() => native.runOp('Conv', [x, raw, null], outs, ints, [], 1), /narrow needs the packed filter \[3, 288, 16\]/)
})

t.test('grouped_filter: each group as [tap][channel], the shape formShape predicts, and typed refusals', async (t) => {
  const { formShape } = await import('../../lib/model/forms.js')
  const cases: Array<[number[], number]> = [[[32, 16, 3, 3], 2], [[48, 4, 3, 3], 8], [[24, 16, 1, 1], 3], [[6, 5, 3, 5], 3]]
  for (const [dims, group] of cases) {
    const n = dims.reduce((a, b) => a * b, 1)
    const data = random(n, group)
    const r = native.prepack('grouped_filter', f32([...dims], data), [group])
    t.strictSame(r.dims, formShape('float32', [...dims], `#grouped_filter(${group})`, 16)!.dims, `dims of ${JSON.stringify(dims)} in ${group} groups`)
    const [k, mg] = [n / dims[0]!, dims[0]! / group]
    const packed = new Float32Array(r.data)
    let bad = 0
    for (let m = 0; m < dims[0]!; m++) {
      for (let p = 0; p < k; p++) if (packed[(Math.floor(m / mg) * k + p) * mg + (m % mg)] !== data[m * k + p]) bad++
    }
    t.equal(bad, 0, `${JSON.stringify(dims)}: W(m, p) at group m / mg, tap p, channel m % mg`)
  }
  t.throws(() => native.prepack('grouped_filter', f32([4, 4, 3], new Float32Array(48)), [2]), /float32 \[M, C\/group, kh, kw\]/, 'a rank-3 weight')
  t.throws(() => native.prepack('grouped_filter', f32([6, 4, 1, 1], new Float32Array(24)), [4]), /group > 1 dividing M = 6/, 'a group count that does not divide M')
  t.throws(() => native.prepack('grouped_filter', f32([6, 4, 1, 1], new Float32Array(24)), []), /expected ints \[group\]/, 'no ints')
  // The Conv op refuses a raw filter for grouped, saying which form it needs.
  const ws = 4096
  const raw = f32([8, 2, 3, 3], random(8 * 2 * 9, 5))
  const outs: NativeTensor[] = [f32([1, 8, 5, 5], new Float32Array(200)), { dtype: 2, dims: [ws], data: new Uint8Array(ws) }]
  const ints = [4, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, convAlgoCode.grouped, 1, 0]
  const x = f32([1, 8, 5, 5], random(200, 6))
  t.throws(() => native.runOp('Conv', [x, raw, null], outs, ints, [], 1), /grouped needs the packed filter \[4, 18, 2\]/)
})
