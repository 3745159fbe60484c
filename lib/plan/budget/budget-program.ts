// SPDX-License-Identifier: Apache-2.0
// Builds the program of a budgeted plan: the ops of every step under its slicing choice, and the
// memory-planning problem of their tensors (lib/plan/memory/preload-plan.ts):
//
//   activation    every non-constant value (aliases share their source's buffer); graph inputs live from
//                 before op 0, graph outputs until after the last op, except those one op computes whole,
//                 which it writes straight into the caller's array (lib/plan/memory/outputs-in-place.ts).
//                 A Concat whose inputs are blocks of its output (lib/plan/memory/concat-in-place.ts:
//                 SqueezeNet's fire modules) runs no op: its producers write their blocks of its buffer,
//                 which lives from the first of them on
//   intermediate  each op's workspace, live during that op only
//   weight        each large constant an op reads, one tensor per op: a weight slice when the step is
//                 sliced (a channel range of the stored form), else the whole form. Its bytes are the
//                 4096-aligned cover of its byte range in the blob, so loads can use O_DIRECT; the op's
//                 tensor points inside the cover.
// Small constants (< residentMaxBytes) live in the resident region below the planned region, written
// once per plan. A weight-sliced Conv writes each channel range of Y through a view (batch 1: contiguous);
// a column-sliced Gemm/MatMul writes its columns of the whole Y (native ints n0, n1).
// `finishProgram` turns the problem's placements into the descriptor of native/runtime/program.h.
import { ShapeError } from '../../errors.js'
import { dtypeBytes, type DType } from '../../model/dtype.js'
import type { Graph, TensorData, ValueInfo } from '../../model/ir.js'
import { numel, valueBytes } from '../../model/ir.js'
import type { InferredGraph, Step } from '../../model/infer-graph.js'
import type { KernelCall } from '../../model/ops/op-def.js'
import { hostTensor } from '../../model/values.js'
import { nativeOpCode } from '../../model/ops/native-op-codes.js'
import type { PlanTensor, PreloadPlan, PreloadProblem } from '../memory/preload-plan.js'
import { sliceBounds, type LayerChoice } from './slicing.js'
import type { ConcatsInPlace } from '../memory/concat-in-place.js'
import type { OutputSource } from '../execution-plan.js'
import { encodeProgram, maxRank, type SlotOrigin } from '../program-builder.js'
import { formShape as analyticFormShape } from '../../model/forms.js'
import { formOf, isConstantValue, residentMaxBytes, type StepLayer, type StepOption } from './layer-options.js'
import { alignUp, alignDown } from '../../align.js'

const block = 4096

/** Where the bytes of a constant come from. */
export type ConstantSource =
  | { readonly kind: 'blob'; readonly blob: string }
  | { readonly kind: 'host'; readonly name: string; readonly data: TensorData; readonly form: string; readonly node: string }

export interface ConstantLookup {
  /** Blob of constant `name` in `form`, when the package stores it. */
  blob(name: string, form: string): { readonly name: string; readonly length: number; readonly paddedLength: number } | undefined
}

/** A weight tensor's load: the blob bytes [start, start + bytes) (4096-aligned, within the padded blob). */
export interface WeightLoad {
  readonly blob: string
  readonly start: number
  readonly bytes: number
}

export interface ResidentConstant {
  /** `${name}|${form}` */
  readonly key: string
  readonly offset: number
  readonly bytes: number
  readonly source: ConstantSource
}

interface SlotSpec {
  /** A problem tensor (activation, intermediate or weight) or the resident region. */
  readonly tensor: number
  readonly resident: number // resident offset when tensor < 0
  /** The run's output buffer this slot lies in (tensor < 0; outputs-in-place.ts), if any. */
  readonly host?: number
  readonly delta: number
  readonly dtype: DType
  readonly dims: number[]
}

export interface BudgetProgram {
  readonly problem: PreloadProblem
  /** Per problem tensor: its load for weights, else undefined. */
  readonly loads: ReadonlyArray<WeightLoad | undefined>
  readonly resident: readonly ResidentConstant[]
  readonly residentBytes: number
  readonly slots: readonly SlotSpec[]
  readonly words: readonly number[]
  readonly ops: number
  readonly inputs: ReadonlyArray<{ readonly name: string; readonly tensor: number }>
  readonly outputs: ReadonlyArray<{ readonly name: string; readonly dtype: DType; readonly dims: number[]; readonly source: OutputSource }>
  readonly opNodes: readonly string[]
  readonly opKinds: ReadonlyArray<{ readonly opType: string; readonly native: string }>
  /** What each slot holds (a shape template of a package prepared for ranges reads its dims from it). */
  readonly slotOrigins: readonly SlotOrigin[]
}

class Builder {
  readonly tensors: Array<{ kind: PlanTensor['kind']; bytes: number; first: number; last: number; name: string }> = []
  readonly loads: Array<WeightLoad | undefined> = []
  readonly slots: SlotSpec[] = []
  readonly origins: SlotOrigin[] = []
  readonly resident: ResidentConstant[] = []
  residentBytes = 0
  private readonly residentAt = new Map<string, number>()
  private readonly slotOf = new Map<string, number>()
  private readonly bufferOf = new Map<string, number>()
  readonly words: number[] = []
  readonly opNodes: string[] = []
  readonly opKinds: Array<{ opType: string; native: string }> = []

  constructor(
    readonly inferred: InferredGraph,
    readonly lookup: ConstantLookup,
    readonly formShapeOf: BuildInput['formShape'],
    readonly gemmNr: number,
    readonly blocks: ConcatsInPlace['blocks'],
    readonly hostOutputs: ReadonlyMap<string, number>,
    /** The resident layout to keep (a program at one shape of a range: the ceiling's plan's layout). */
    readonly residentLayout?: { readonly constants: readonly ResidentConstant[]; readonly bytes: number },
  ) {
    if (residentLayout !== undefined) this.residentBytes = residentLayout.bytes
  }

  get ops(): number {
    return this.opNodes.length
  }

  value(name: string): ValueInfo {
    return this.inferred.values.get(name)!
  }

  addSlot(s: SlotSpec, origin: SlotOrigin): number {
    if (s.dims.length > maxRank) throw new ShapeError(`tensors of rank ${s.dims.length} exceed the maximum rank ${maxRank}`)
    this.origins.push(origin)
    this.slots.push(s)
    return this.slots.length - 1
  }

  newTensor(kind: PlanTensor['kind'], bytes: number, first: number, name: string, load?: WeightLoad): number {
    this.tensors.push({ kind, bytes, first, last: first, name })
    this.loads.push(load)
    return this.tensors.length - 1
  }

  touch(t: number, step: number): void {
    const x = this.tensors[t]!
    x.first = Math.min(x.first, step)
    x.last = Math.max(x.last, step)
  }

  /** The slot of activation `name` at op k (its buffer's lifetime grows to cover k). */
  activation(name: string, k: number): number {
    const known = this.slotOf.get(name)
    if (known !== undefined) {
      const s = this.slots[known]!
      if (s.host === undefined) this.touch(s.tensor, k)
      return known
    }
    const v = this.value(name)
    const host = this.hostOutputs.get(name)
    if (host !== undefined) {
      const id = this.addSlot({ tensor: -1, resident: 0, host, delta: 0, dtype: v.dtype, dims: v.dims as number[] }, { kind: 'value', name })
      this.slotOf.set(name, id)
      return id
    }
    const block = this.blocks.get(name)
    if (block !== undefined) {
      // a block of a Concat's output in place: a view of that output's buffer
      const whole = this.activation(block.output, k)
      const id = this.addSlot({ ...this.slots[whole]!, delta: this.slots[whole]!.delta + block.byteOffset, dtype: v.dtype, dims: v.dims as number[] }, { kind: 'view' })
      this.bufferOf.set(name, this.slots[whole]!.tensor)
      this.slotOf.set(name, id)
      return id
    }
    let buffer = this.bufferOf.get(name)
    if (buffer === undefined) buffer = this.newTensor('activation', Math.max(1, valueBytes(v)), k, name)
    this.bufferOf.set(name, buffer)
    this.touch(buffer, k)
    const id = this.addSlot({ tensor: buffer, resident: 0, delta: 0, dtype: v.dtype, dims: v.dims as number[] }, { kind: 'value', name })
    this.slotOf.set(name, id)
    return id
  }

  alias(src: string, out: string, k: number): void {
    if (isConstantValue(this.value(src))) return
    this.activation(src, k)
    this.bufferOf.set(out, this.bufferOf.get(src)!)
  }

  /** A view of an activation slot: byte offset `delta` and other dims. */
  view(slot: number, delta: number, dims: number[]): number {
    const s = this.slots[slot]!
    return this.addSlot({ ...s, delta: s.delta + delta, dims }, { kind: 'view' })
  }

  /** Resident constant `name` in `form` (from its blob, or its host data transformed at plan time). */
  residentConstant(name: string, form: string, node: string, dtype: DType, dims: number[], bytes: number): number {
    const key = `${name}|${form}`
    let offset = this.residentAt.get(key)
    if (offset === undefined) {
      const kept = this.residentLayout?.constants.find((r) => r.key === key)
      if (this.residentLayout !== undefined && (kept === undefined || kept.bytes < bytes)) {
        throw new ShapeError(`node '${node}': constant '${name}' (${form}) ${kept === undefined ? 'is not among' : 'outgrows its place in'} the resident constants of the plan made at the ceiling`)
      }
      offset = kept?.offset ?? this.residentBytes
      const blob = this.lookup.blob(name, form)
      let source: ConstantSource
      if (blob !== undefined) source = { kind: 'blob', blob: blob.name }
      else {
        const host = hostTensor(this.value(name))
        if (host === undefined) throw new ShapeError(`node '${node}': constant '${name}' (${form}) is not in the package; re-run flexpipe prepare`)
        source = { kind: 'host', name, data: host, form, node }
      }
      this.resident.push({ key, offset, bytes, source })
      this.residentAt.set(key, offset)
      if (kept === undefined) this.residentBytes = alignUp(offset + bytes, block)
    }
    return this.addSlot({ tensor: -1, resident: offset, delta: 0, dtype, dims }, form === 'raw' ? { kind: 'value', name } : { kind: 'prepack' })
  }

  /** A weight tensor for op k: bytes [begin, end) of the blob of `name` in `form`, seen as dtype/dims. */
  weight(name: string, form: string, node: string, k: number, begin: number, end: number, dtype: DType, dims: number[]): number {
    const blob = this.lookup.blob(name, form)
    if (blob === undefined) throw new ShapeError(`node '${node}': weight '${name}' (${form}) is not in the package; re-run flexpipe prepare`)
    const start = alignDown(begin, block)
    const stop = Math.min(alignUp(end, block), blob.paddedLength)
    const t = this.newTensor('weight', stop - start, k, `${name}${form === 'raw' ? '' : form}[${begin}:${end})`, { blob: blob.name, start, bytes: stop - start })
    return this.addSlot({ tensor: t, resident: 0, delta: begin - start, dtype, dims }, { kind: 'prepack' })
  }

  workspace(bytes: number, k: number): number {
    const t = this.newTensor('intermediate', bytes, k, `workspace@${k}`)
    return this.addSlot({ tensor: t, resident: 0, delta: 0, dtype: 'uint8', dims: [bytes] }, { kind: 'workspace' })
  }

  emit(step: Step, call: KernelCall, ins: number[], outs: number[], ints: readonly number[]): void {
    const code = nativeOpCode(call.op)
    if (code === undefined) throw new ShapeError(`node '${step.node.name}': native op '${call.op}' is not in this build`)
    this.words.push(code, ins.length, outs.length, ints.length, call.floats.length, ...ins, ...outs, ...ints, ...call.floats)
    this.opNodes.push(step.node.name)
    this.opKinds.push({ opType: step.node.opType, native: call.op })
  }
}

/** A constant input of op k: resident when small or not stored as a blob, else a whole weight tensor. */
function constantInput(b: Builder, step: Step, call: KernelCall, j: number, name: string, k: number): number {
  const form = formOf(call, j)
  const v = b.value(name)
  const blob = b.lookup.blob(name, form)
  const shape = blob !== undefined ? formShape(b, name, form, v) : analyticFormShape(v.dtype, v.dims as number[], form, b.gemmNr)
  if (shape === undefined) throw new ShapeError(`node '${step.node.name}': constant '${name}' has an unknown form ${form}`)
  const bytes = numel(shape.dims) * dtypeBytes(shape.dtype)
  if (blob === undefined || bytes < residentMaxBytes) return b.residentConstant(name, form, step.node.name, shape.dtype, shape.dims, bytes)
  return b.weight(name, form, step.node.name, k, 0, bytes, shape.dtype, shape.dims)
}

/** dtype and dims of a constant's stored form (recorded by prepare as the blob's tensor info). */
function formShape(b: Builder, name: string, form: string, v: ValueInfo): { dtype: DType; dims: number[] } {
  if (form === 'raw') return { dtype: v.dtype, dims: v.dims as number[] }
  const s = b.formShapeOf(name, form)
  if (s === undefined) throw new ShapeError(`constant '${name}' has no shape recorded for form ${form}; re-run flexpipe prepare`)
  return s
}

function inputSlot(b: Builder, step: Step, call: KernelCall, j: number, k: number): number {
  const i = call.inputs[j]!
  const name = i < 0 ? '' : (step.node.inputs[i] ?? '')
  if (name === '') return -1
  return isConstantValue(b.value(name)) ? constantInput(b, step, call, j, name, k) : b.activation(name, k)
}

function outputSlots(b: Builder, step: Step, call: KernelCall, k: number): number[] {
  const n = call.outputs ?? step.outputs.length
  const outs: number[] = []
  for (let i = 0; i < n; i++) {
    const name = step.node.outputs[i] ?? ''
    const v = step.outputs[i]!
    if (name !== '') outs.push(b.activation(name, k))
    else {
      const t = b.newTensor('intermediate', Math.max(1, valueBytes(v)), k, `${step.node.name}:out${i}`)
      outs.push(b.addSlot({ tensor: t, resident: 0, delta: 0, dtype: v.dtype, dims: v.dims as number[] }, { kind: 'step-output', node: step.node.name, index: i }))
    }
  }
  return outs
}

function emitWhole(b: Builder, step: Step, call: KernelCall): void {
  const k = b.ops
  const ins = call.inputs.map((_, j) => inputSlot(b, step, call, j, k))
  const outs = outputSlots(b, step, call, k)
  if (call.workspace !== undefined && call.workspace > 0) outs.push(b.workspace(call.workspace, k))
  b.emit(step, call, ins, outs, call.ints)
}

/** A weight-sliced step: one op per channel range of its weight. */
function emitSliced(b: Builder, step: Step, o: StepOption, call: KernelCall, slices: number): void {
  const sl = o.sliced!
  const wName = step.node.inputs[call.inputs[sl.input]!]!
  const wShape = formShape(b, wName, sl.form, b.value(wName))
  const bounds = sliceBounds(sl.weight.channels, sl.weight.unit, slices)
  const y = step.outputs[0]!.dims as number[]
  for (let s = 1; s < bounds.length; s++) {
    const c0 = bounds[s - 1]!
    const c1 = bounds[s]!
    const k = b.ops
    const ins = call.inputs.map((_, j) => (j === sl.input ? -1 : inputSlot(b, step, call, j, k)))
    const outs = outputSlots(b, step, call, k)
    let ints = call.ints
    if (sl.axis === 'conv-out') {
      // The panel-major forms, Winograd's [panels, a², C, 16] and the narrow GEMM's [panels, K, 16]
      // (which the lean Winograd kernels read too): whole 16-channel panels (c0 is a multiple of 16,
      // the slicing unit of every kernel reading them)
      const panelForm = sl.form.startsWith('#winograd_') || sl.form.startsWith('#conv_narrow_filter(')
      const panels = panelForm && wShape.dims[wShape.dims.length - 1] === 16 && wShape.dims[0] === Math.ceil(y[1]! / 16)
      if (panels) {
        const panelBytes = (numel(wShape.dims) / wShape.dims[0]!) * 4
        const p0 = c0 / 16
        const p1 = Math.ceil(c1 / 16)
        ins[sl.input] = b.weight(wName, sl.form, step.node.name, k, p0 * panelBytes, p1 * panelBytes, 'float32', [p1 - p0, ...wShape.dims.slice(1)])
      } else {
        const rowBytes = (numel(wShape.dims) / wShape.dims[0]!) * 4
        ins[sl.input] = b.weight(wName, sl.form, step.node.name, k, c0 * rowBytes, c1 * rowBytes, 'float32', [c1 - c0, ...wShape.dims.slice(1)])
      }
      const plane = numel(y.slice(2)) * 4
      outs[0] = b.view(outs[0]!, c0 * plane, [1, c1 - c0, ...y.slice(2)])
      if (ins[2] !== undefined && ins[2] >= 0) ins[2] = b.view(ins[2], c0 * 4, [c1 - c0])
      // a fused residual (lib/model/fuse-residual.ts) is added to the same channels of Y
      if (ins[3] !== undefined && ins[3] >= 0) ins[3] = b.view(ins[3], c0 * plane, [1, c1 - c0, ...y.slice(2)])
    } else {
      const [panels, kk, nr] = wShape.dims as [number, number, number]
      void panels
      const panelBytes = kk * nr * 4
      const p0 = Math.floor(c0 / nr)
      const p1 = Math.ceil(c1 / nr)
      ins[sl.input] = b.weight(wName, sl.form, step.node.name, k, p0 * panelBytes, p1 * panelBytes, 'float32', [p1 - p0, kk, nr])
      ints = [...call.ints, c0, c1]
    }
    if (call.workspace !== undefined && call.workspace > 0) outs.push(b.workspace(call.workspace, k))
    b.emit(step, call, ins, outs, ints)
  }
}

export interface BuildInput {
  readonly graph: Graph
  readonly inferred: InferredGraph
  readonly layers: readonly StepLayer[]
  readonly choices: readonly LayerChoice[]
  /** The model's Concats in place (concatsInPlace, found once per model, not per candidate build). */
  readonly concats: ConcatsInPlace
  /** The graph outputs written into the caller's arrays (outputsInPlace, once per model). */
  readonly hostOutputs: ReadonlyMap<string, number>
  readonly lookup: ConstantLookup
  readonly formShape: (name: string, form: string) => { dtype: DType; dims: number[] } | undefined
  /** Packed GEMM panel width of this build (shapes of forms transformed at plan time). */
  readonly gemmNr: number
  /** Keep this resident layout (offsets by constant and form) instead of laying the constants out anew. */
  readonly residentLayout?: { readonly constants: readonly ResidentConstant[]; readonly bytes: number }
}

/** The ops and the planning problem of `choices` (one per layer). */
export function buildBudgetProgram(input: BuildInput): BudgetProgram {
  const { graph, inferred, layers, choices } = input
  const inPlace = input.concats
  const b = new Builder(inferred, input.lookup, input.formShape, input.gemmNr, inPlace.blocks, input.hostOutputs, input.residentLayout)
  const layerAt = new Map(layers.map((l, i) => [l.index, i]))
  const inputs = graph.inputs
    .filter((d) => !isConstantValue(b.value(d.name)))
    .map((d) => ({ name: d.name, tensor: b.activation(d.name, -1) }))
  inferred.steps.forEach((step, index) => {
    if (step.aliasOf !== undefined) {
      b.alias(step.node.inputs[step.aliasOf]!, step.node.outputs[0]!, b.ops)
      return
    }
    const li = layerAt.get(index)
    if (li === undefined || step.kernel === undefined || inPlace.steps.has(index)) return
    const choice = choices[li]!
    const o = layers[li]!.options[choice.option]!
    const call = o.callFor(choice.inputSlices)
    if (choice.weightSlices > 1 && o.sliced !== undefined) emitSliced(b, step, o, call, choice.weightSlices)
    else emitWhole(b, step, call)
  })
  const end = b.ops
  const outputs = graph.outputs.map((o) => {
    const v = b.value(o.name)
    const host = hostTensor(v)
    let source: OutputSource
    if (host !== undefined) source = { kind: 'constant', data: host }
    else if (graph.inputs.some((d) => d.name === o.name) && !inputs.some((i) => i.name === o.name)) source = { kind: 'input', name: o.name }
    else source = { kind: 'tensor', tensor: b.activation(o.name, end) }
    return { name: o.name, dtype: v.dtype, dims: v.dims as number[], source }
  })
  return {
    problem: { steps: end, tensors: b.tensors.map((t) => ({ kind: t.kind, bytes: t.bytes, first: t.first, last: t.last, name: t.name })) },
    loads: b.loads,
    resident: b.resident,
    residentBytes: b.residentBytes,
    slots: b.slots,
    words: b.words,
    ops: end,
    inputs,
    outputs,
    opNodes: b.opNodes,
    opKinds: b.opKinds,
    slotOrigins: b.origins,
  }
}

/** The program descriptor with every tensor at its planned place (planned region at `base`). */
export function finishProgram(p: BudgetProgram, plan: PreloadPlan, base: number): Float64Array {
  const slots = p.slots.map((s) => ({
    region: s.host === undefined ? 0 : 2 + s.host,
    offset: s.host !== undefined ? s.delta : (s.tensor < 0 ? s.resident : base + plan.placements[s.tensor]!.offset) + s.delta,
    dtype: s.dtype,
    dims: s.dims,
  }))
  return encodeProgram(slots, p.words, p.ops)
}
