// SPDX-License-Identifier: Apache-2.0
// Turns the steps of a concrete shape-inference pass into a native program: assigns every
// value a tensor slot (constants in the persistent region, activations planned by planMemory),
// and encodes the op list as the descriptor documented in native/runtime/program.h. The activation
// buffers it planned are returned with their lifetimes in ops, for the plan's memory layout.
import { ShapeError } from '../errors.js'
import { dtypeCode, type DType } from '../model/dtype.js'
import type { Graph, ValueInfo } from '../model/ir.js'
import { valueBytes } from '../model/ir.js'
import type { InferredGraph, Step } from '../model/infer-graph.js'
import type { Prepack } from '../model/ops/op-def.js'
import { hostTensor } from '../model/values.js'
import { nativeOpCode } from '../model/ops/native-op-codes.js'
import { planMemory, type BufferRequest } from './memory/memory-plan.js'
import type { BufferKind, OutputSource, PlannedBuffer, ProgramIo } from './execution-plan.js'
import { concatsInPlace } from './memory/concat-in-place.js'
import { outputsInPlace } from './memory/outputs-in-place.js'

export const maxRank = 8

/** A program built for one concrete input signature: its tensors and ops, and the bytes of its activation region. */
export interface BuiltProgram extends ProgramIo {
  readonly activationBytes: number
  /** The activation region's buffers (region 1), with the ops that take them. */
  readonly buffers: readonly PlannedBuffer[]
  /** What each tensor slot holds, in slot order (a shape template reads the dims of each from its shape function). */
  readonly slotOrigins: readonly SlotOrigin[]
}

/** What a tensor slot of a program holds. */
export type SlotOrigin =
  /** A named value of the graph (input, activation, output or constant). */
  | { readonly kind: 'value'; readonly name: string }
  /** An unnamed output of a node. */
  | { readonly kind: 'step-output'; readonly node: string; readonly index: number }
  /** An op's scratch bytes, or a constant transformed for a kernel (or a weight slice of one). */
  | { readonly kind: 'workspace' | 'prepack' }
  /** Part of another slot's tensor: a weight-sliced op's channel range, a Concat's block (memory-budget programs). */
  | { readonly kind: 'view' }

export interface PlacedConstant {
  readonly offset: number
  readonly dtype: DType
  readonly dims: readonly number[]
}

/** Where constants live: the placement of a constant value, as is or pre-transformed (placed beforehand). */
export type ConstantSlot = (name: string, value: ValueInfo, prepack?: Prepack) => PlacedConstant

interface Slot {
  origin: SlotOrigin
  region: number // 0 persistent, 1 activations, 2 + k the run's output buffer k (outputs-in-place.ts)
  offset: number
  dtype: DType
  dims: number[]
  buffer: number // activation buffer index, or -1 for persistent
  byteOffset?: number // within the buffer (a block of a Concat in place)
}

class ProgramState {
  readonly slots: Slot[] = []
  readonly slotOf = new Map<string, number>()
  readonly buffers: Array<{ bytes: number; first: number; last: number; kind: BufferKind; name: string }> = []
  readonly rootBuffer = new Map<string, number>() // value name -> activation buffer

  addSlot(slot: Slot): number {
    if (slot.dims.length > maxRank) throw new ShapeError(`tensors of rank ${slot.dims.length} exceed the maximum rank ${maxRank}`)
    this.slots.push(slot)
    return this.slots.length - 1
  }

  newBuffer(bytes: number, first: number, kind: BufferKind, name: string): number {
    this.buffers.push({ bytes, first, last: first, kind, name })
    return this.buffers.length - 1
  }

  touch(buffer: number, step: number): void {
    const b = this.buffers[buffer]!
    b.first = Math.min(b.first, step)
    b.last = Math.max(b.last, step)
  }
}

function isConstant(v: ValueInfo): boolean {
  return v.tensor !== undefined || hostTensor(v) !== undefined
}

export interface BuildOptions {
  /** Outputs one op computes whole are written into the run's output buffers (see buildProgram). */
  readonly outputsInPlace?: boolean
  /**
   * Concat inputs written straight into their block of the output (default true). A shape template turns
   * it off: a block's byte offset inside the output depends on the shape.
   */
  readonly concatsInPlace?: boolean
}

/**
 * Builds the program for one concrete input signature. With `outputsInPlace`, the outputs one op
 * computes whole are written straight into the run's output buffers (lib/plan/memory/outputs-in-place.ts;
 * the run must then pass a buffer for every tensor output, in order); else every output is copied out
 * (runs of op ranges that pass the outputs only to the last one).
 */
export function buildProgram(graph: Graph, inferred: InferredGraph, constantSlot: ConstantSlot, options: BuildOptions = {}): BuiltProgram {
  const st = new ProgramState()
  const valueOf = (name: string): ValueInfo => inferred.values.get(name)!
  const slotFor = (name: string, step: number): number => {
    const known = st.slotOf.get(name)
    const v = valueOf(name)
    if (known !== undefined) {
      const b = st.slots[known]!.buffer
      if (b >= 0) st.touch(b, step)
      return known
    }
    if (isConstant(v)) {
      const c = constantSlot(name, v)
      const id = st.addSlot({ origin: { kind: 'value', name }, region: 0, offset: c.offset, dtype: c.dtype, dims: c.dims.slice(), buffer: -1 })
      st.slotOf.set(name, id)
      return id
    }
    const host = hostOutputs.get(name)
    if (host !== undefined) {
      const id = st.addSlot({ origin: { kind: 'value', name }, region: 2 + host, offset: 0, dtype: v.dtype, dims: v.dims as number[], buffer: -1 })
      st.slotOf.set(name, id)
      return id
    }
    // A block of a Concat in place lives in the Concat output's buffer.
    const block = inPlace.blocks.get(name)
    const root = block?.output ?? name
    const buffer = st.rootBuffer.get(root) ?? st.newBuffer(valueBytes(valueOf(root)), step, 'activation', root)
    st.rootBuffer.set(root, buffer)
    st.touch(buffer, step)
    const id = st.addSlot({ origin: { kind: 'value', name }, region: 1, offset: 0, dtype: v.dtype, dims: v.dims as number[], buffer, byteOffset: block?.byteOffset ?? 0 })
    st.slotOf.set(name, id)
    return id
  }
  const inPlace = options.concatsInPlace === false ? { blocks: new Map<string, { output: string; byteOffset: number }>(), steps: new Set<number>() } : concatsInPlace(graph, inferred, (v) => !isConstant(v))
  const read = new Set<string>()
  for (const step of inferred.steps) {
    if (step.aliasOf !== undefined) read.add(step.node.inputs[step.aliasOf]!)
    for (const i of step.kernel?.inputs ?? []) if (i >= 0) read.add(step.node.inputs[i] ?? '')
  }
  const copiedIn = graph.inputs.filter((d) => read.has(d.name) && !isConstant(valueOf(d.name)))
  const passedThrough = (name: string): boolean => graph.inputs.some((d) => d.name === name) && !copiedIn.some((d) => d.name === name)
  const hostOutputs = options.outputsInPlace
    ? outputsInPlace(graph, inferred, inPlace, (v) => !isConstant(v), (name) => hostTensor(valueOf(name)) === undefined && !passedThrough(name))
    : new Map<string, number>()
  const inputs = copiedIn.map((d) => ({ name: d.name, tensor: slotFor(d.name, -1) }))
  const words: number[] = []
  const opNodes: string[] = []
  const opKinds: Array<{ opType: string; native: string }> = []
  const firstOp: number[] = [] // per step, the first op it emits; then the op count
  inferred.steps.forEach((step, k) => {
    firstOp.push(opNodes.length)
    encodeStep(step, k)
  })
  firstOp.push(opNodes.length)
  const end = inferred.steps.length
  const outputs = graph.outputs.map((o) => {
    const v = valueOf(o.name)
    const dims = v.dims as number[]
    const host = hostTensor(v)
    let source: OutputSource
    if (host !== undefined) source = { kind: 'constant', data: host }
    else if (!st.slotOf.has(o.name) && graph.inputs.some((d) => d.name === o.name)) source = { kind: 'input', name: o.name }
    else source = { kind: 'tensor', tensor: slotFor(o.name, end) }
    return { name: o.name, dtype: v.dtype, dims, source }
  })
  const mem = planMemory(st.buffers as BufferRequest[])
  for (const s of st.slots) if (s.buffer >= 0) s.offset = mem.offsets[s.buffer]! + (s.byteOffset ?? 0)
  const buffers = st.buffers.map((b, i): PlannedBuffer => ({ kind: b.kind, name: b.name, region: 1, offset: mem.offsets[i]!, bytes: b.bytes, ...opsOfSteps(b.first, b.last, firstOp) }))
  return { program: encodeProgram(st.slots, words, opNodes.length), activationBytes: mem.size, buffers, inputs, outputs, opNodes, opKinds, slotOrigins: st.slots.map((s) => s.origin) }

  function encodeStep(step: Step, k: number): void {
    if (step.aliasOf !== undefined) {
      const src = step.node.inputs[step.aliasOf]!
      slotFor(src, k)
      const buffer = st.rootBuffer.get(src)
      const out = step.node.outputs[0]!
      if (buffer !== undefined) st.rootBuffer.set(out, buffer)
      else st.rootBuffer.delete(out)
      return
    }
    if (inPlace.steps.has(k)) {
      slotFor(step.node.outputs[0]!, k) // its producers wrote the blocks: no op
      return
    }
    const call = step.kernel!
    const code = nativeOpCode(call.op)
    if (code === undefined) throw new ShapeError(`node '${step.node.name}': native op '${call.op}' is not in this build`)
    const ins = call.inputs.map((i, j) => {
      const name = i < 0 ? '' : (step.node.inputs[i] ?? '')
      if (name === '') return -1
      const prepack = call.prepack?.find((p) => p.input === j)
      if (prepack === undefined) return slotFor(name, k)
      const c = constantSlot(name, valueOf(name), prepack)
      return st.addSlot({ origin: { kind: 'prepack' }, region: 0, offset: c.offset, dtype: c.dtype, dims: c.dims.slice(), buffer: -1 })
    })
    const nOut = call.outputs ?? step.outputs.length
    const outs: number[] = []
    for (let i = 0; i < nOut; i++) {
      const name = step.node.outputs[i] ?? ''
      const v = step.outputs[i]!
      if (name !== '') outs.push(slotFor(name, k))
      else outs.push(st.addSlot({ origin: { kind: 'step-output', node: step.node.name, index: i }, region: 1, offset: 0, dtype: v.dtype, dims: v.dims as number[], buffer: st.newBuffer(valueBytes(v), k, 'intermediate', `${step.node.name}:out${i}`) }))
    }
    if (call.workspace !== undefined && call.workspace > 0) {
      outs.push(st.addSlot({ origin: { kind: 'workspace' }, region: 1, offset: 0, dtype: 'uint8', dims: [call.workspace], buffer: st.newBuffer(call.workspace, k, 'intermediate', `workspace@${step.node.name}`) }))
    }
    words.push(code, ins.length, outs.length, call.ints.length, call.floats.length, ...ins, ...outs, ...call.ints, ...call.floats)
    opNodes.push(step.node.name)
    opKinds.push({ opType: step.node.opType, native: call.op })
  }
}

/**
 * The ops a lifetime of inclusive steps [first, last] takes, where `firstOp[k]` is the first op step k
 * emits (aliases and Concats in place emit none) and `firstOp[steps]` the op count. Before the first
 * step (graph inputs, first -1) counts from op 0, after the last (graph outputs) to the last op.
 * Buffers apart in steps stay apart in ops; steps that emit no op give an empty lifetime (to < from).
 */
function opsOfSteps(first: number, last: number, firstOp: readonly number[]): { from: number; to: number } {
  const steps = firstOp.length - 1
  return { from: first < 0 ? 0 : firstOp[Math.min(first, steps)]!, to: firstOp[Math.min(last + 1, steps)]! - 1 }
}

/** Encodes tensor slots and op words as the descriptor of native/runtime/program.h. */
export function encodeProgram(slots: ReadonlyArray<Pick<Slot, 'region' | 'offset' | 'dtype' | 'dims'>>, opWords: readonly number[], nOps: number): Float64Array {
  const out = new Float64Array(3 + slots.length * (4 + maxRank) + opWords.length)
  out[0] = 1
  out[1] = slots.length
  out[2] = nOps
  let p = 3
  for (const s of slots) {
    out[p] = s.region
    out[p + 1] = s.offset
    out[p + 2] = dtypeCode(s.dtype)
    out[p + 3] = s.dims.length
    s.dims.forEach((d, i) => (out[p + 4 + i] = d))
    p += 4 + maxRank
  }
  out.set(opWords, p)
  return out
}
