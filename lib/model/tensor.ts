// SPDX-License-Identifier: Apache-2.0
// The Tensor type users pass and receive: a dtype, dims and a TypedArray of the right kind.
import { ArgumentError } from '../errors.js'
import { allocArray, arrayFits, isDType, type DType, type TypedArray } from './dtype.js'
import type { Dim } from './ir.js'
import { numel } from './ir.js'

export type { DType, TypedArray } from './dtype.js'

export interface Tensor {
  readonly dtype: DType
  readonly dims: readonly number[]
  /** float32: Float32Array, int64: BigInt64Array, int32: Int32Array, uint8 and bool: Uint8Array, ... */
  readonly data: TypedArray
}

/** Describes a model input or output; dims may be symbolic ('batch', 'seq_len'). */
export interface TensorInfo {
  readonly name: string
  readonly dtype: DType
  readonly dims: readonly Dim[] | undefined
}

/** Makes a tensor, allocating zeroed data when none is given; checks that data fits dims and dtype. */
export function tensor(dtype: DType, dims: readonly number[], data?: TypedArray): Tensor {
  if (!isDType(dtype)) throw new ArgumentError(`dtype: expected one of float32, int64, int32, uint8, bool, ..., got ${String(dtype)}`)
  if (!Array.isArray(dims) || dims.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new ArgumentError(`dims: expected an array of non-negative integers, got ${JSON.stringify(dims)}`)
  }
  const n = numel(dims)
  const array = data ?? allocArray(dtype, n)
  if (!arrayFits(dtype, array)) {
    throw new ArgumentError(`data: a ${dtype} tensor needs a ${allocArray(dtype, 0).constructor.name}, got ${array.constructor.name}`)
  }
  if (array.length !== n) throw new ArgumentError(`data: dims [${dims.join(', ')}] need ${n} elements, got ${array.length}`)
  return { dtype, dims: dims.slice(), data: array }
}
