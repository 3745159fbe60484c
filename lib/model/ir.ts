// SPDX-License-Identifier: Apache-2.0
// The graph IR: what ONNX import produces and every later stage reads.
import { dtypeBytes, type DType, type TypedArray } from './dtype.js'

/** A dimension: a number, or a symbol such as 'batch' or an expression such as '(H+2)'. */
export type Dim = number | string

/** A constant tensor held on the host (an initializer, a Constant node, or a folded value). */
export interface TensorData {
  readonly dtype: DType
  readonly dims: readonly number[]
  readonly data: TypedArray
  /**
   * The same elements as stored in the model file (little-endian, possibly unaligned), when they came
   * from one: an initializer's raw bytes inside the mapped file. Then `data` is made from them (an
   * aligned copy) only when something reads it, and the engine writes the bytes into its arena directly.
   */
  readonly bytes?: Uint8Array
}

/** A tensor's elements as bytes: its file bytes when it has them, else a view of `data`. */
export function tensorBytes(t: TensorData): Uint8Array {
  return t.bytes ?? new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)
}

/** A tensor whose bytes stay in a file until the engine loads them (ONNX external data). */
export interface ExternalTensor {
  readonly dtype: DType
  readonly dims: readonly number[]
  readonly path: string // absolute path of the data file
  readonly offset: number
  readonly length: number
}

export type AttrValue = number | string | number[] | string[] | TensorData

export interface Node {
  readonly name: string
  readonly opType: string
  readonly domain: string
  /** Input value names; '' marks an absent optional input. */
  readonly inputs: readonly string[]
  readonly outputs: readonly string[]
  readonly attrs: ReadonlyMap<string, AttrValue>
}

export interface ValueDecl {
  readonly name: string
  readonly dtype: DType
  /** Declared dims; undefined when the model does not declare a shape at all. */
  readonly dims: readonly Dim[] | undefined
}

export interface Graph {
  readonly name: string
  /** Opset of the default ONNX domain. */
  readonly opset: number
  readonly nodes: readonly Node[] // topologically sorted
  readonly inputs: readonly ValueDecl[] // graph inputs that are not initializers
  readonly outputs: readonly ValueDecl[]
  readonly initializers: ReadonlyMap<string, TensorData | ExternalTensor>
}

export function isExternal(t: TensorData | ExternalTensor): t is ExternalTensor {
  return (t as ExternalTensor).path !== undefined
}

/**
 * What shape inference knows about a value: its dtype and dims, and, when known, its contents.
 * `values` holds the elements of small tensors (shape arithmetic, scalar attributes fed as
 * inputs), possibly symbolic; `tensor` holds a full host constant (initializers, folded nodes).
 */
export interface ValueInfo {
  readonly dtype: DType
  readonly dims: readonly Dim[]
  readonly values?: readonly Dim[]
  readonly tensor?: TensorData | ExternalTensor
}

/** Each value name's consuming nodes in graph order (a node reading a value twice is listed twice). */
export function valueConsumers(graph: Graph): Map<string, Node[]> {
  const consumers = new Map<string, Node[]>()
  for (const n of graph.nodes) {
    for (const x of n.inputs) {
      const list = consumers.get(x)
      if (list === undefined) consumers.set(x, [n])
      else list.push(n)
    }
  }
  return consumers
}

export function numel(dims: readonly number[]): number {
  let n = 1
  for (const d of dims) n *= d
  return n
}

/** Bytes of a value whose dims are concrete (after shape inference with concrete inputs). */
export function valueBytes(v: Pick<ValueInfo, 'dtype' | 'dims'>): number {
  return numel(v.dims as number[]) * dtypeBytes(v.dtype)
}
