// SPDX-License-Identifier: Apache-2.0
// Conv and ConvTranspose (float32, 1-D to 3-D spatial): output dims, pads resolution, native encoding,
// and the choice of convolution algorithm per shape (depthwise, narrow GEMM, 1x1 GEMM, Winograd, im2col, direct).
import { convAlgoCode, convApplies, convCost, convDepthwiseWorkspaceBytes, convPoolWorkspaceBytes, convTransposeWorkspaceBytes, defaultConvTransposeSlices, isWinograd, slicePixels, tapsGeometry, type ConvKernel, type ConvShape } from './conv-cost.js'
import { attrInt, attrInts } from '../attrs.js'
import { allConcrete, concrete, dimAdd, dimMul, dimSub, isConcrete } from '../dims.js'
import { fusedClamp } from '../fuse-activations.js'
import { fusedDepthwiseAttrs, hasFusedDepthwise } from '../fuse-conv-depthwise.js'
import { fusedPoolAttrs, hasFusedPool } from '../fuse-conv-pool.js'
import type { Dim, ValueInfo } from '../ir.js'
import { maxKernelThreads } from './nn-matmul.js'
import { info, type KernelCall, type OpContext, type OpDef, type OpResult } from './op-def.js'
import { input, optionalInput, shapeError, unsupported } from './op-util.js'
import { type Window, windowAttrs, windowInts, windowOutDims, windowOutput, windowPads } from './nn-spatial.js'
import { tapWindowInts, tapWindowOfPrepack, trimDeadTaps, type TapWindow } from './conv-taps.js'

/** X and W checked for float32 and equal rank 3..5; returns the spatial rank. */
function convOperands(ctx: OpContext): { x: ValueInfo; w: ValueInfo; nsp: number } {
  const x = input(ctx, 0)
  const w = input(ctx, 1)
  if (x.dtype !== 'float32' || w.dtype !== 'float32') throw unsupported(ctx, `dtype ${x.dtype} (only float32)`)
  const nsp = x.dims.length - 2
  if (nsp < 1 || nsp > 3) throw unsupported(ctx, `rank ${x.dims.length} input (1 to 3 spatial dims supported)`)
  if (w.dims.length !== x.dims.length) throw shapeError(ctx, `W has rank ${w.dims.length}, X has ${x.dims.length}`)
  const b = optionalInput(ctx, 2)
  if (b !== undefined && b.dims.length !== 1) throw shapeError(ctx, `B must be 1-D (got rank ${b.dims.length})`)
  return { x, w, nsp }
}

function groupOf(ctx: OpContext): number {
  const g = attrInt(ctx.node, 'group', 1)
  if (!Number.isInteger(g) || g < 1) throw shapeError(ctx, `group ${g} is invalid`)
  return g
}

function checkChannels(ctx: OpContext, have: Dim, want: Dim, what: string): void {
  if (isConcrete(have) && isConcrete(want) && have !== want) {
    throw shapeError(ctx, `${what}: expected ${want} channels, got ${have}`)
  }
}

/** The native 3-D form of a concrete convolution (leading unit axes for 1-D and 2-D). */
export function convShape(
  x: readonly number[], m: number, group: number, win: Window, outSpatial: readonly number[], padBegin: readonly number[],
): ConvShape {
  const nsp = x.length - 2
  const lift = (v: readonly number[], unit: number): [number, number, number] => {
    const r: [number, number, number] = [unit, unit, unit]
    for (let i = 0; i < nsp; i++) r[3 - nsp + i] = v[i] ?? unit
    return r
  }
  return {
    batch: x[0]!, inChannels: x[1]!, outChannels: m, group,
    in: lift(x.slice(2), 1), out: lift(outSpatial, 1), kernel: lift(win.kernel, 1),
    stride: lift(win.strides, 1), dilation: lift(win.dilations, 1), pad: lift(padBegin, 0),
  }
}

/**
 * Whether the narrow GEMM (vectors along output channels, the weight in 16-channel panels) beats the
 * pixel-vectorized ones: small planes (up to 256 pixels: 16x16, 14x14, 13x13) with long reductions
 * (K >= 256), where a row of pixels leaves partial vectors and the weight, used only once per pixel, is
 * read as one stream; not for 3x3 stride-1 layers, which keep Winograd there. `node
 * dist/bench/kernels/conv.bench.js` (1 thread, AVX-512): ResNet's 1x1 2048->512 at 7x7 0.70 vs 1.26 ms
 * (gemm1x1), its 1x1 stride-2 downsample 1024->2048 1.50 vs 2.46 ms (im2col), MobileNetV2's 1x1
 * 384->64 at 14x14 0.062 vs 0.082 ms, SqueezeNet's classifier (1000 channels at 13x13) 1.16 vs 1.27 ms;
 * SqueezeNet's 1x1 64->256 at 13x13 (K = 64) is a tie and stays with gemm1x1. Since the transposing
 * store epilogue, the classifier and ResNet-50's 1x1 256->1024 at 14x14 also win in the model (whole
 * SqueezeNet and ResNet-50 1.5-3% faster at 1 and 2 threads, an ad hoc A/B of both choices), so
 * there is no cap on output channels any more.
 */
function prefersNarrow(s: ConvShape): boolean {
  if (!convApplies('narrow', s)) return false
  const pixels = s.out[0] * s.out[1] * s.out[2]
  const k = s.inChannels * s.kernel[0] * s.kernel[1] * s.kernel[2]
  if (k < 256 || s.outChannels < 16) return false
  if (pixels <= 64) return true
  return pixels <= 256 && !convApplies('winograd63', s)
}

/**
 * Whether the narrow GEMM over phase planes (the implicit im2col of native/runtime/conv_narrow.h)
 * beats im2col + GEMM: group 1, at least 8 input channels (stems over 3 keep their im2col by rows)
 * and 32 output channels (two AVX-512 panels per tile). It also beats Winograd when the reduction is
 * short (<= 16 input channels), where Winograd's transforms outweigh its saved products.
 * `node dist/bench/kernels/conv.bench.js --layers resnet7s2,sqe3,sqe3b,sqe3c,stem7,stemsq,stem --threads 1,2`
 * (AVX-512): ResNet's 3x3 stride 2 256->256 at 28x28 1.75 vs 2.32 ms (im2col) at 1 thread, 0.99 vs
 * 1.25 at 2; SqueezeNet's 3x3 16->64 at 55x55 0.41-0.42 vs 0.43 (F(6,3)) at 1 thread, 0.23 vs 0.30
 * at 2; with 32 input channels F(6,3) still wins (0.33 vs 0.37 ms). Stems with 3 input channels:
 * 0.54-0.58 vs 0.62-0.65 ms at 1 thread but 0.36 vs 0.32 at 2, and with 16-32 output channels narrow
 * loses (PP-OCR's 3->16: 2.06 vs 1.71 ms).
 * On planes too small for F(6,3) (< 16 6x6 tiles) it also replaces F(2,3) up to 64 input channels.
 * There F(2,3)'s filter (16 transformed taps per 9 weights, 1.8x the narrow panels) is likely read
 * from beyond L2 in a model, where a kernel benchmark re-reads it warm: SqueezeNet's 3x3 64->256 at
 * 13x13 takes 0.36 ms either way alone (`conv.bench.js --layers sqe3c,resnet14`, 1 thread), and the
 * whole model ran 2-4% faster with narrow at 1 and 2 threads (an ad hoc A/B of both choices). With
 * 256 input channels (ResNet's 14x14) F(2,3) keeps a clear lead: 1.23 vs 1.68 ms.
 * On the Zen 4 VM (2026-11-29) Winograd measured 15-44% faster than narrow on these layers alone
 * (`conv.bench.js --layers sq55,sq27,sq13,sq13b,gn28,gn14,gn7,gn56,c64x14`, AVX-512 and AVX2), and
 * SqueezeNet 1.1 faster in one whole-model A/B but not in the full zoo run after it; taking Winograd
 * also raised the minimum budget of a budgeted package (test/fixtures/models/vgg_small.onnx prepared
 * at 10 MB: 8.4 -> 9.1 MB), so the choice stayed as it is (docs/benchmarks/zoo.md, c2e4ce2).
 */
function prefersImplicitNarrow(s: ConvShape): boolean {
  if (!convApplies('narrow', s) || s.inChannels < 8 || s.outChannels < 32) return false
  return !isStridedPointwiseOverLargePlane(s)
}

/**
 * A strided 1x1 convolution with more than 256 output pixels (ResNet's first downsample, 256->512
 * from 56x56 to 28x28): with one tap there is no reuse for the phase planes to exploit, and its
 * im2col is a subsampled copy that the pixel-vectorized GEMM runs at full tiles, as gemm1x1 wins over
 * narrow on stride-1 planes of this size (prefersNarrow). `node dist/bench/kernels/conv.bench.js
 * --layers down28,down14 --kernels narrow,im2col` (AVX-512): 256->512 at 56x56 1.50-1.52 vs 1.85 ms
 * at 1 thread, 0.79-0.81 vs 1.05 at 2; the 196-pixel 512->1024 from 28x28 stays narrow (1.48 vs 1.58,
 * 0.80 vs 0.84).
 */
function isStridedPointwiseOverLargePlane(s: ConvShape): boolean {
  const pointwise = s.kernel[0] === 1 && s.kernel[1] === 1 && s.kernel[2] === 1
  return pointwise && s.out[0] * s.out[1] * s.out[2] > 256
}

/**
 * Whether most of a convolution's tap-pixel products read padding (at most half read the input), so
 * that the taps algorithm (native runtime/conv_taps.h), which does only the others, beats every dense
 * one: DeepLabV3's ASPP at dilation 12 on a 14x14 map (324 of 1,764) once its dead taps are trimmed
 * (conv-taps.ts) is the case in the zoo.
 */
function mostlyPadding(s: ConvShape): boolean {
  const taps = s.kernel[1] * s.kernel[2]
  if (!convApplies('taps', s) || taps === 1) return false
  return 2 * tapsGeometry(s).tapPixels <= taps * s.out[1] * s.out[2]
}

/**
 * The default algorithm for a shape (FlexNN's latency order Winograd -> im2col + GEMM -> direct; the
 * memory planner may pick another one with the costs of lib/model/ops/conv-cost.ts). Winograd needs the
 * weight at plan time (its filter is transformed once) and >= 8 input and output channels to amortize
 * its transforms; F(6,3) needs >= 16 6x6 tiles per image to amortize its 7x larger filter (measured on
 * avx2: at 14x14 F(2,3) is 1.7x faster with 128+ channels, from 20x20 up F(6,3) wins), else F(2,3).
 * Other grouped 2-D convolutions of stride 1 or 2 take the grouped kernel (RegNet, ResNeXt, ShuffleNet
 * v1: no per-group GEMM, whose tile of mr rows a group's few channels leave mostly empty; see
 * native/kernels/grouped/grouped.h); the rest with 1..3 output channels per group are direct.
 */
export function chooseConvKernel(s: ConvShape, constantWeight: boolean): ConvKernel {
  if (convApplies('depthwise', s)) return 'depthwise'
  if (constantWeight && convApplies('grouped', s)) return 'grouped'
  if (constantWeight && mostlyPadding(s)) return 'taps'
  if (constantWeight && prefersNarrow(s)) return 'narrow'
  if (convApplies('gemm1x1', s)) return s.outChannels / s.group >= 4 ? 'gemm1x1' : 'direct'
  const implicit = constantWeight && prefersImplicitNarrow(s)
  if (constantWeight && convApplies('winograd63', s) && s.inChannels >= 8 && s.outChannels >= 8) {
    const tiles63 = Math.ceil(s.out[1] / 6) * Math.ceil(s.out[2] / 6)
    if (implicit && (s.inChannels <= 16 || (s.inChannels <= 64 && tiles63 < 16))) return 'narrow'
    return tiles63 >= 16 ? 'winograd63' : 'winograd23'
  }
  if (implicit) return 'narrow'
  return s.outChannels / s.group >= 4 ? 'im2col' : 'direct'
}

/** Default input slices: column (or packed input) buffers of at most 2 MiB, slices of >= 64 pixels. */
export function defaultConvSlices(kernel: ConvKernel, s: ConvShape): number {
  if (kernel !== 'im2col' && kernel !== 'gemm1x1' && kernel !== 'narrow') return 1
  const k = (s.inChannels / s.group) * s.kernel[0] * s.kernel[1] * s.kernel[2]
  const pixels = slicePixels(s, 1)
  return Math.max(1, Math.ceil(pixels / Math.max(64, Math.floor((2 << 20) / (4 * k)))))
}

/**
 * The native Conv call: chosen algorithm, its slices, workspace (for maxKernelThreads), prepack, and the
 * clamp of an activation fused into the node (lib/model/fuse-activations.ts) as the kernels' epilogue.
 */
function convCall(ctx: OpContext, s: ConvShape, ints: readonly number[], window?: TapWindow, atCeiling?: ConvShape): KernelCall {
  const constant = ctx.inputs[1]?.tensor !== undefined
  const own = window === undefined ? chooseConvKernel(s, constant) : chooseTrimmedKernel(s)
  // In a shape bucket, the ceiling's algorithm and slices where they apply to this shape (a slice
  // holds at least one output pixel), so that the bucket's shapes share one program's op words.
  const chosen = atCeiling === undefined ? undefined : chooseConvKernel(atCeiling, constant)
  const shared = chosen !== undefined && convApplies(chosen, s) && defaultConvSlices(chosen, atCeiling!) <= s.out[0] * s.out[1] * s.out[2]
  const kernel = shared ? chosen : own
  const slices = shared ? defaultConvSlices(chosen, atCeiling!) : defaultConvSlices(kernel, s)
  const workspace = convCost(kernel, s, slices, { threads: maxKernelThreads }).workspaceBytes
  const clamp = fusedClamp(ctx.node)
  return {
    op: 'Conv',
    inputs: [0, 1, optionalInput(ctx, 2) === undefined ? -1 : 2, ...(optionalInput(ctx, 3) === undefined ? [] : [3])],
    ints: [...ints, convAlgoCode[kernel], slices, clamp === undefined ? 0 : 2],
    floats: clamp === undefined ? [] : [clamp.min, clamp.max],
    ...(workspace > 0 ? { workspace } : {}),
    ...convPrepack(kernel, s.group, window),
  }
}

/**
 * The algorithm for a convolution whose filter was cut to its live taps: as for any other, but not
 * Winograd, whose filter transforms take a whole 3x3 kernel (a cut 5x5 that happens to be 3x3).
 */
function chooseTrimmedKernel(s: ConvShape): ConvKernel {
  const kernel = chooseConvKernel(s, true)
  if (!isWinograd(kernel)) return kernel
  return convApplies('narrow', s) ? 'narrow' : 'im2col'
}

/** The prepack transform `kernel` reads its filter through (Winograd's, narrow's panels), if any. */
export function convWeightTransform(kernel: ConvKernel): string | undefined {
  return {
    winograd63: 'winograd_f63_filter',
    winograd23: 'winograd_f23_filter',
    narrow: 'conv_narrow_filter',
    winograd63_lean: 'conv_narrow_filter',
    winograd23_lean: 'conv_narrow_filter',
    grouped: 'grouped_filter',
    taps: 'conv_taps_filter',
  }[kernel as string]
}

/**
 * The prepack of `kernel`'s filter: grouped_filter takes the group count; a filter cut to a window of
 * live taps takes the window's ints (conv_window for the kernels that read a raw filter).
 */
function convPrepack(kernel: ConvKernel, group: number, window?: TapWindow): Pick<KernelCall, 'prepack'> {
  const transform = convWeightTransform(kernel)
  const cut = window === undefined ? [] : tapWindowInts(window)
  if (transform === undefined) return window === undefined ? {} : { prepack: [{ input: 1, transform: 'conv_window', ints: cut }] }
  return { prepack: [{ input: 1, transform, ints: kernel === 'grouped' ? [group, ...cut] : cut }] }
}

/** The tap window a Conv call's filter was cut to, from its prepack's ints. */
export function windowOfConvCall(call: KernelCall): TapWindow | undefined {
  const p = call.prepack?.find((q) => q.input === 1)
  return p === undefined ? undefined : tapWindowOfPrepack(p)
}

const conv: OpDef = {
  opType: 'Conv',
  infer(ctx) {
    const { x, w, nsp } = convOperands(ctx)
    const group = groupOf(ctx)
    const win = windowAttrs(ctx, nsp, w.dims.slice(2))
    checkChannels(ctx, x.dims[1]!, dimMul(w.dims[1]!, group), 'X')
    const m = w.dims[0]!
    if (isConcrete(m) && m % group !== 0) {
      throw shapeError(ctx, `${m} output channels do not split into ${group} groups`)
    }
    const out: Dim[] = [x.dims[0]!, m, ...windowOutput(ctx, win, x.dims.slice(2))]
    if (hasFusedDepthwise(ctx.node)) return convDepthwiseInfer(ctx, x, group, win, out)
    // A residual fused in from the Add after the Conv (lib/model/fuse-residual.ts): Y's shape exactly.
    const r = optionalInput(ctx, 3)
    if (r !== undefined && (r.dtype !== 'float32' || r.dims.length !== out.length || r.dims.some((d, i) => isConcrete(d) && isConcrete(out[i]!) && d !== out[i]))) {
      throw shapeError(ctx, `the fused residual R [${r.dims.join(', ')}] must have the output's shape [${out.join(', ')}]`)
    }
    if (hasFusedPool(ctx.node)) return convPoolInfer(ctx, x, group, win, out)
    return {
      outputs: [info('float32', out)],
      kernel: () => {
        const { s, begin, end } = concreteConv(ctx, x, group, win, out)
        const atCeiling = ceilingConv(ctx, group, win, m)
        // Taps that only ever read padding are trimmed from a constant 2-D filter (conv-taps.ts).
        const trimmed = nsp === 2 && ctx.inputs[1]?.tensor !== undefined ? trimDeadTaps(s, [end[0]!, end[1]!]) : undefined
        if (trimmed === undefined) return convCall(ctx, s, [group, ...windowInts(win, begin, end)], undefined, atCeiling)
        const cut: Window = { ...win, kernel: [trimmed.shape.kernel[1], trimmed.shape.kernel[2]] }
        return convCall(ctx, trimmed.shape, [group, ...windowInts(cut, [trimmed.shape.pad[1], trimmed.shape.pad[2]], trimmed.padEnd)], trimmed.window)
      },
    }
  },
}

/** The node's ConvShape at the ceiling of the shape bucket being planned (OpContext.ceiling), if any. */
function ceilingConv(ctx: OpContext, group: number, win: Window, m: Dim): ConvShape | undefined {
  const x = ctx.ceiling?.[0]
  if (x === undefined || !allConcrete(x.dims)) return undefined
  const c: OpContext = { ...ctx, inputs: ctx.ceiling! }
  return concreteConv(c, x, group, win, [x.dims[0]!, m, ...windowOutput(c, win, x.dims.slice(2))]).s
}

/** The native shape of a Conv node once its dims are concrete (out: its output dims), and its explicit pads. */
function concreteConv(ctx: OpContext, x: ValueInfo, group: number, win: Window, out: readonly Dim[]): { s: ConvShape; begin: number[]; end: number[] } {
  const where = `node '${ctx.node.name}'`
  const xd = concrete(x.dims, where)
  const od = concrete(out, where)
  const { begin, end } = windowPads(win, xd.slice(2))
  return { s: convShape(xd, od[1]!, group, win, od.slice(2), begin), begin, end }
}

/**
 * A Conv carrying the MaxPool after it (lib/model/fuse-conv-pool.ts): Y is the pool's output, and the
 * native ConvMaxPool computes both in bands of pool rows (native/runtime/conv_pool.h).
 */
function convPoolInfer(ctx: OpContext, x: ValueInfo, group: number, win: Window, convOut: Dim[]): OpResult {
  const poolCtx: OpContext = { ...ctx, node: { ...ctx.node, attrs: fusedPoolAttrs(ctx.node) } }
  const poolWin = windowAttrs(poolCtx, 2)
  const out: Dim[] = [convOut[0]!, convOut[1]!, ...windowOutput(poolCtx, poolWin, convOut.slice(2))]
  return {
    outputs: [info('float32', out)],
    kernel: () => {
      const { s, begin, end } = concreteConv(ctx, x, group, win, convOut)
      const pool = windowPads(poolWin, s.out.slice(1))
      const od = concrete(out, `node '${ctx.node.name}'`)
      const clamp = fusedClamp(ctx.node)
      const poolShape = { kernel: poolWin.kernel, strides: poolWin.strides, dilations: poolWin.dilations, padBegin: pool.begin, out: od.slice(2) }
      return {
        op: 'ConvMaxPool',
        inputs: [0, 1, optionalInput(ctx, 2) === undefined ? -1 : 2],
        ints: [group, ...windowInts(win, begin, end), ...windowInts(poolWin, pool.begin, pool.end), clamp === undefined ? 0 : 2],
        floats: clamp === undefined ? [] : [clamp.min, clamp.max],
        workspace: convPoolWorkspaceBytes(s, poolShape, maxKernelThreads),
      }
    },
  }
}

/** The activation code and bounds of a fused clamp in the native ops' encoding (0: none, 2: Clip). */
function clampCode(clamp: { min: number; max: number } | undefined): { code: number; floats: number[] } {
  return clamp === undefined ? { code: 0, floats: [0, 0] } : { code: 2, floats: [clamp.min, clamp.max] }
}

/**
 * A Conv carrying the depthwise 3x3 Conv after it (lib/model/fuse-conv-depthwise.ts): inputs 3 and 4
 * are the depthwise's weight and bias, Y is its output, and the native ConvDepthwise computes both in
 * bands of output rows (native/runtime/conv_depthwise.h).
 */
function convDepthwiseInfer(ctx: OpContext, x: ValueInfo, group: number, win: Window, mid: Dim[]): OpResult {
  const dwCtx: OpContext = { ...ctx, node: { ...ctx.node, attrs: fusedDepthwiseAttrs(ctx.node) } }
  const dwWin = windowAttrs(dwCtx, 2, [3, 3])
  const w2 = input(ctx, 3)
  const m = mid[1]!
  if (w2.dtype !== 'float32' || w2.dims.length !== 4 || w2.dims[1] !== 1 || (isConcrete(m) && w2.dims[0] !== m)) {
    throw shapeError(ctx, `the fused depthwise weight must be float32 [${m}, 1, 3, 3] (got ${w2.dtype} [${w2.dims.join(', ')}])`)
  }
  const b2 = optionalInput(ctx, 4)
  if (b2 !== undefined && b2.dims.length !== 1) throw shapeError(ctx, `the fused depthwise bias must be 1-D (got rank ${b2.dims.length})`)
  const out: Dim[] = [mid[0]!, m, ...windowOutput(dwCtx, dwWin, mid.slice(2))]
  return {
    outputs: [info('float32', out)],
    kernel: () => {
      const { s, begin, end } = concreteConv(ctx, x, group, win, mid)
      const dw = windowPads(dwWin, s.out.slice(1))
      const od = concrete(out, `node '${ctx.node.name}'`)
      const act1 = clampCode(fusedClamp(ctx.node))
      const act2 = clampCode(fusedClamp(dwCtx.node))
      return {
        op: 'ConvDepthwise',
        inputs: [0, 1, optionalInput(ctx, 2) === undefined ? -1 : 2, 3, b2 === undefined ? -1 : 4],
        ints: [...windowInts(win, begin, end), ...windowInts(dwWin, dw.begin, dw.end), act1.code, act2.code],
        floats: [...act1.floats, ...act2.floats],
        workspace: convDepthwiseWorkspaceBytes(s, { stride: dwWin.strides[0]!, padBegin: dw.begin, out: od.slice(2) }, maxKernelThreads),
      }
    },
  }
}

interface TransposeGeometry {
  /** Output length along spatial axis i for input length len. */
  readonly outLen: (i: number, len: Dim) => Dim
  /** Pad before spatial axis i for a concrete input length. */
  readonly padBegin: (i: number, len: number) => number
}

/** Output dims and begin pads of ConvTranspose per the ONNX rules (output_shape wins over pads). */
function transposeGeometry(ctx: OpContext, nsp: number, win: Window): TransposeGeometry {
  const outPad = attrInts(ctx.node, 'output_padding') ?? new Array<number>(nsp).fill(0)
  if (outPad.length !== nsp) throw shapeError(ctx, `output_padding has ${outPad.length} entries, expected ${nsp}`)
  let outShape = attrInts(ctx.node, 'output_shape')
  if (outShape !== undefined) {
    if (outShape.length < nsp) throw shapeError(ctx, `output_shape has ${outShape.length} entries, expected ${nsp}`)
    outShape = outShape.slice(outShape.length - nsp)
  }
  const shape = outShape
  const same = win.autoPad === 'SAME_UPPER' || win.autoPad === 'SAME_LOWER'
  // The unpadded output: stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1.
  const full = (i: number, len: Dim): Dim => {
    const ext = ((win.kernel[i] ?? 1) - 1) * (win.dilations[i] ?? 1) + 1
    return dimAdd(dimMul(dimSub(len, 1), win.strides[i] ?? 1), ext + (outPad[i] ?? 0))
  }
  const outLen = (i: number, len: Dim): Dim => {
    if (shape !== undefined) return shape[i] ?? 0
    if (same) return dimMul(len, win.strides[i] ?? 1)
    return dimSub(full(i, len), (win.pads[i] ?? 0) + (win.pads[nsp + i] ?? 0))
  }
  const padBegin = (i: number, len: number): number => {
    if (shape === undefined && !same) return win.pads[i] ?? 0
    // ONNX: the odd unit of total padding goes at the end for SAME_UPPER, at the start otherwise
    // (NOTSET with output_shape, SAME_LOWER); a negative total (output_shape beyond the full output)
    // leaves zeros at the end.
    const total = Math.max(0, (full(i, len) as number) - (outLen(i, len) as number))
    return win.autoPad === 'SAME_UPPER' ? Math.floor(total / 2) : total - Math.floor(total / 2)
  }
  return { outLen, padBegin }
}

const convTranspose: OpDef = {
  opType: 'ConvTranspose',
  infer(ctx) {
    const { x, w, nsp } = convOperands(ctx)
    const group = groupOf(ctx)
    checkChannels(ctx, x.dims[1]!, w.dims[0]!, 'X')
    const kernel = attrInts(ctx.node, 'kernel_shape') ?? w.dims.slice(2)
    if (!kernel.every(isConcrete)) throw unsupported(ctx, 'the kernel dims must be known before the run')
    const win = windowAttrs(ctx, nsp, kernel)
    const geo = transposeGeometry(ctx, nsp, win)
    const spatial = x.dims.slice(2).map((d, i) => geo.outLen(i, d))
    const out: Dim[] = [x.dims[0]!, dimMul(w.dims[1]!, group), ...spatial]
    return {
      outputs: [info('float32', out)],
      kernel: () => {
        const where = `node '${ctx.node.name}'`
        const xd = concrete(x.dims, where)
        const spatial = xd.slice(2)
        const padBegin = spatial.map((len, i) => geo.padBegin(i, len))
        const yd = concrete(out, where)
        // GEMM + col2im over bands of input rows (native/runtime/conv_transpose.h).
        const s = convShape(xd, yd[1]!, group, win, yd.slice(2), padBegin)
        const slices = defaultConvTransposeSlices(s)
        return {
          op: 'ConvTranspose',
          inputs: [0, 1, optionalInput(ctx, 2) === undefined ? -1 : 2],
          ints: [group, ...windowInts(win, padBegin), 1, slices],
          floats: [],
          workspace: convTransposeWorkspaceBytes(s, slices, maxKernelThreads),
        }
      },
    }
  },
}

export const convOps: OpDef[] = [conv, convTranspose]

/** The parts of a Conv KernelCall's ints (layout above the native Conv op). */
export interface ConvCallInts {
  readonly shape: ConvShape
  readonly kernel: ConvKernel
  readonly slices: number
  /** Index of the algo int (slices follows it). */
  readonly algoAt: number
  /** The window of live taps its filter was cut to (conv-taps.ts), if it was. */
  readonly window?: TapWindow
}

const convKernelOfCode = new Map(Object.entries(convAlgoCode).map(([k, v]) => [v, k as ConvKernel]))

/** Decodes a Conv call made by convCall for input dims x and output dims y (the budget planner re-chooses). */
export function decodeConvCall(call: KernelCall, x: readonly number[], y: readonly number[]): ConvCallInts {
  const group = call.ints[0]!
  const conv = windowOfInts(call.ints, 1)
  const algoAt = conv.next
  const kernel = convKernelOfCode.get(call.ints[algoAt]!)
  if (call.op !== 'Conv' || kernel === undefined) throw new Error(`decodeConvCall: not a Conv call (${call.op})`)
  const window = windowOfConvCall(call)
  return { shape: convShape(x, y[1]!, group, conv.win, y.slice(2), conv.begin), kernel, slices: call.ints[algoAt + 1]!, algoAt, ...(window === undefined ? {} : { window }) }
}

/** A spatial block of a call's ints (windowInts's layout, pads_end included) at `at`, and the index after it. */
function windowOfInts(ints: readonly number[], at: number): { win: Window; begin: number[]; next: number } {
  const nsp = ints[at]!
  const v = (i: number): number[] => ints.slice(at + 1 + i * nsp, at + 1 + (i + 1) * nsp) as number[]
  const begin = v(3)
  const win: Window = { kernel: v(0), strides: v(1), dilations: v(2), autoPad: 'NOTSET', pads: [...begin, ...v(4)], ceil: false }
  return { win, begin, next: at + 1 + 5 * nsp }
}

/** The same Conv call with another algorithm and input slice count, its workspace sized for `threads`. */
export function withConvKernel(call: KernelCall, c: ConvCallInts, kernel: ConvKernel, slices: number, threads: number): KernelCall {
  const ints = call.ints.slice()
  ints[c.algoAt] = convAlgoCode[kernel]
  ints[c.algoAt + 1] = slices
  const workspace = convCost(kernel, c.shape, slices, { threads }).workspaceBytes
  const { workspace: _w, prepack: _p, ...rest } = call
  return {
    ...rest,
    ints,
    ...(workspace > 0 ? { workspace } : {}),
    ...convPrepack(kernel, c.shape.group, c.window),
  }
}

/**
 * A ConvMaxPool call (convPoolInfer) with its workspace sized for `threads` (the budget planner sizes
 * every workspace for the engine's threads). x: the input dims, y: the pool's output dims.
 */
export function withConvPoolThreads(call: KernelCall, x: readonly number[], y: readonly number[], threads: number): KernelCall {
  if (call.op !== 'ConvMaxPool') throw new Error(`withConvPoolThreads: not a ConvMaxPool call (${call.op})`)
  const conv = windowOfInts(call.ints, 1)
  const pool = windowOfInts(call.ints, conv.next)
  const s = convShape(x, y[1]!, call.ints[0]!, conv.win, windowOutDims(conv.win, x.slice(2)) as number[], conv.begin)
  const p = pool.win
  const workspace = convPoolWorkspaceBytes(s, { kernel: p.kernel, strides: p.strides, dilations: p.dilations, padBegin: pool.begin, out: y.slice(2) }, threads)
  return { ...call, workspace }
}

/**
 * A ConvDepthwise call (convDepthwiseInfer) with its workspace sized for `threads`. x: the input dims,
 * y: the depthwise's output dims.
 */
export function withConvDepthwiseThreads(call: KernelCall, x: readonly number[], y: readonly number[], threads: number): KernelCall {
  if (call.op !== 'ConvDepthwise') throw new Error(`withConvDepthwiseThreads: not a ConvDepthwise call (${call.op})`)
  const conv = windowOfInts(call.ints, 0)
  const dw = windowOfInts(call.ints, conv.next)
  const s = convShape(x, y[1]!, 1, conv.win, windowOutDims(conv.win, x.slice(2)) as number[], conv.begin)
  const workspace = convDepthwiseWorkspaceBytes(s, { stride: dw.win.strides[0]!, padBegin: dw.begin, out: y.slice(2) }, threads)
  return { ...call, workspace }
}
