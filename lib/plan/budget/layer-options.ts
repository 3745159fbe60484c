// SPDX-License-Identifier: Apache-2.0
// The kernel options of each step of a planned graph, as the slicing planner (lib/plan/budget/slicing.ts) sees
// them: which kernels can compute it (latency order), the weight each reads in which storage form, how
// that weight splits into channel slices, and the workspace per input slice count.
//
//   Conv (constant weight):  its default kernel first (Winograd, narrow, 1x1 GEMM or im2col), then for a
//                            Winograd layer the narrow GEMM (raw-sized panels), then im2col + GEMM
//                            (input slices), then direct. Weight slices along output channels need batch 1
//                            and group 1 (each slice writes a contiguous channel range of Y).
//   Gemm / MatMul, packed B: the packed-panel GEMM; weight slices are column ranges of B (multiples of the
//                            panel width), written into the one output (ints n0, n1 of the native op).
//   anything else:           as the op defines it; large constant inputs are read whole.
// Only options whose weight form the package stores are offered (a package prepared for budget B has the
// forms its choices at B and without a budget need).
import type { InferredGraph, Step } from '../../model/infer-graph.js'
import { valueBytes, type ValueInfo } from '../../model/ir.js'
import { decodeConvCall, withConvDepthwiseThreads, withConvKernel, withConvPoolThreads } from '../../model/ops/nn-conv.js'
import type { KernelCall, Prepack } from '../../model/ops/op-def.js'
import { hostTensor } from '../../model/values.js'
import { convApplies, isWinograd, leanWinograd, slicePixels, type ConvKernel } from '../../model/ops/conv-cost.js'
import type { KernelOption, LayerInfo, SliceableWeight } from './slicing.js'
import { prepackKey } from '../../model/constant-data.js'

/** Constants below this size live in the arena's resident region (written once, never reloaded). */
export const residentMaxBytes = 64 * 1024

/** Fewest output pixels per im2col input slice (the seed's platform threshold: 32). */
export const minSlicePixels = 32

export type SliceAxis = 'conv-out' | 'gemm-cols'

/** One way to run a step: the native call, and the input it slices (if any). */
export interface StepOption {
  readonly kernel: string
  /** The native call with the default input slices. */
  readonly call: KernelCall
  /** The native call with `inputSlices` input slices (its workspace sized for the engine's threads). */
  readonly callFor: (inputSlices: number) => KernelCall
  /** Position in call.inputs of the sliced weight; with `axis`. */
  readonly sliced?: {
    readonly input: number
    readonly axis: SliceAxis
    readonly weight: SliceableWeight
    readonly form: string
    /** Whether the op can run on a channel range of this weight. */
    readonly sliceable: boolean
  }
  /** Bytes of large constants read whole. */
  readonly fixedBytes: number
  readonly workspace: (inputSlices: number) => number
  readonly defaultInputSlices: number
  readonly maxInputSlices: number
}

export interface StepLayer {
  readonly index: number
  readonly step: Step
  readonly options: readonly StepOption[]
  /** The kernel the op chooses on its own (what an engine without a budget runs). */
  readonly defaultKernel: string
  readonly defaultInputSlices: number
}

/** The storage form key of a constant call input: 'raw' or the prepack key. */
export function formOf(call: KernelCall, input: number): string {
  const p = call.prepack?.find((q: Prepack) => q.input === input)
  return p === undefined ? 'raw' : prepackKey(p)
}

export function isConstantValue(v: ValueInfo | undefined): boolean {
  return v !== undefined && (v.tensor !== undefined || hostTensor(v) !== undefined)
}

export interface OptionContext {
  readonly inferred: InferredGraph
  /** Whether the package holds constant `name` in `form` (prepare: every form it may write). */
  readonly hasForm: (name: string, form: string) => boolean
  /** Bytes of constant `name` in `form` (the prepacked size for transforms). */
  readonly formBytes: (name: string, form: string) => number
  /** Packed GEMM panel width of this build's kernels. */
  readonly gemmNr: number
  /** Threads the workspaces are sized for. */
  readonly threads: number
}

const lcm = (a: number, b: number): number => {
  let x = a
  let y = b
  while (y) [x, y] = [y, x % y]
  return (a / x) * b
}

function constantName(step: Step, call: KernelCall, input: number): string | undefined {
  const i = call.inputs[input]
  if (i === undefined || i < 0) return undefined
  const name = step.node.inputs[i] ?? ''
  return name !== '' && isConstantValue(step.inputs[i]) ? name : undefined
}

/** Bytes of large constants the call reads whole, except input `skip`. */
function fixedBytes(ctx: OptionContext, step: Step, call: KernelCall, skip: number): number {
  let total = 0
  call.inputs.forEach((_, j) => {
    const name = j === skip ? undefined : constantName(step, call, j)
    if (name === undefined) return
    const form = formOf(call, j)
    const bytes = form === 'raw' ? valueBytes(step.inputs[call.inputs[j]!]!) : ctx.formBytes(name, form)
    if (bytes >= residentMaxBytes) total += bytes
  })
  return total
}

function asIs(ctx: OptionContext, step: Step, call: KernelCall): StepOption {
  const ws = call.workspace ?? 0
  return { kernel: 'as-is', call, callFor: () => call, fixedBytes: fixedBytes(ctx, step, call, -1), workspace: () => ws, defaultInputSlices: 1, maxInputSlices: 1 }
}

function convOptions(ctx: OptionContext, step: Step, call: KernelCall): StepOption[] {
  const x = step.inputs[0]!.dims as number[]
  const y = step.outputs[0]!.dims as number[]
  const c = decodeConvCall(call, x, y)
  const s = c.shape
  const name = constantName(step, call, 1)
  if (name === undefined || c.kernel === 'depthwise') return [asIs(ctx, step, call)]
  const kernels: ConvKernel[] = [c.kernel]
  // The narrow GEMM reads 16-channel panels of the raw filter: for a Winograd layer, the lean form a
  // streamed weight can switch to (Winograd's filters are 16/9 or 64/9 the raw bytes), read either by
  // the lean Winograd kernel (the same tiles, each panel transformed at run time) or by the narrow GEMM
  // itself, at a fraction of im2col's extra compute (balanceIo in plan-budget.ts weighs them).
  if (c.kernel === 'winograd63' || c.kernel === 'winograd23') kernels.push(leanWinograd(c.kernel))
  if (isWinograd(c.kernel) && convApplies('narrow', s)) kernels.push('narrow')
  if (c.kernel !== 'im2col' && c.kernel !== 'direct' && convApplies('im2col', s)) kernels.push('im2col')
  if (c.kernel !== 'direct') kernels.push('direct')
  const sliceable = s.batch === 1 && s.group === 1
  const options: StepOption[] = []
  for (const kernel of kernels) {
    const winograd = isWinograd(kernel)
    const defaultSlices = kernel === c.kernel ? c.slices : 1
    const probe = withConvKernel(call, c, kernel, defaultSlices, ctx.threads)
    const form = formOf(probe, 1)
    if (!ctx.hasForm(name, form)) continue
    const bytes = ctx.formBytes(name, form)
    const unit = winograd || kernel === 'narrow' ? 16 : 8 // whole 16-channel panels of the transformed forms
    const units = Math.ceil(s.outChannels / unit)
    const weight: SliceableWeight = { bytes, channels: s.outChannels, unit, unitBytes: Math.ceil(bytes / units) }
    const inputSliced = kernel === 'im2col' || kernel === 'gemm1x1' || kernel === 'narrow'
    const maxSlices = inputSliced ? Math.max(defaultSlices, Math.floor(slicePixels(s, 1) / minSlicePixels)) : 1
    options.push({
      kernel,
      call: probe,
      // taps' filter is [tap][M][C]: a range of output channels is no one byte range
      sliced: { input: 1, axis: 'conv-out', weight, form, sliceable: sliceable && kernel !== 'taps' },
      fixedBytes: fixedBytes(ctx, step, probe, 1),
      callFor: (slices) => withConvKernel(call, c, kernel, slices, ctx.threads),
      workspace: (slices) => withConvKernel(call, c, kernel, slices, ctx.threads).workspace ?? 0,
      defaultInputSlices: defaultSlices,
      maxInputSlices: maxSlices,
    })
  }
  return options.length === 0 ? [asIs(ctx, step, call)] : options
}

function gemmOptions(ctx: OptionContext, step: Step, call: KernelCall): StepOption[] {
  const name = constantName(step, call, 1)
  const form = formOf(call, 1)
  if (name === undefined || form === 'raw' || !ctx.hasForm(name, form)) return [asIs(ctx, step, call)]
  const y = step.outputs[0]!.dims as number[]
  const n = y[y.length - 1]!
  const bytes = ctx.formBytes(name, form)
  const unit = lcm(8, ctx.gemmNr)
  const weight: SliceableWeight = { bytes, channels: n, unit, unitBytes: Math.ceil(bytes / Math.ceil(n / unit)) }
  const ws = call.workspace ?? 0
  return [{ kernel: 'gemm', call, callFor: () => call, sliced: { input: 1, axis: 'gemm-cols', weight, form, sliceable: true }, fixedBytes: fixedBytes(ctx, step, call, 1), workspace: () => ws, defaultInputSlices: 1, maxInputSlices: 1 }]
}

/** The options of every kernel step (alias steps have none and are skipped). */
export function stepLayers(ctx: OptionContext): StepLayer[] {
  const layers: StepLayer[] = []
  ctx.inferred.steps.forEach((step, index) => {
    const call = step.kernel
    if (call === undefined || step.aliasOf !== undefined) return
    let options: StepOption[]
    if (call.op === 'Conv') options = convOptions(ctx, step, call)
    else if (call.op === 'Gemm' || call.op === 'MatMul') options = gemmOptions(ctx, step, call)
    else if (call.op === 'ConvMaxPool') options = [asIs(ctx, step, withConvPoolThreads(call, step.inputs[0]!.dims as number[], step.outputs[0]!.dims as number[], ctx.threads))]
    else if (call.op === 'ConvDepthwise') options = [asIs(ctx, step, withConvDepthwiseThreads(call, step.inputs[0]!.dims as number[], step.outputs[0]!.dims as number[], ctx.threads))]
    else options = [asIs(ctx, step, call)]
    layers.push({ index, step, options, defaultKernel: options[0]!.kernel, defaultInputSlices: options[0]!.defaultInputSlices })
  })
  return layers
}

/** Whether a weight option may be cut into slices. */
export function weightSliceable(o: StepOption): boolean {
  return o.sliced?.sliceable === true
}

/** The slicing planner's view of a layer, with the activation bytes live at its step. */
export function layerInfo(layer: StepLayer, liveBytes: number): LayerInfo {
  return {
    step: layer.index,
    liveBytes,
    options: layer.options.map(
      (o): KernelOption => ({
        kernel: o.kernel,
        ...(o.sliced === undefined ? {} : { weight: o.sliced.weight }),
        weightSliceable: weightSliceable(o),
        fixedBytes: o.fixedBytes,
        workspace: o.workspace,
        defaultInputSlices: o.defaultInputSlices,
        maxInputSlices: o.maxInputSlices,
      }),
    ),
  }
}
