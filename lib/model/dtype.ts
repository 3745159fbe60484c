// SPDX-License-Identifier: Apache-2.0
// Element types: names users see, the ONNX/native codes, sizes and TypedArray constructors.

export type DType =
  | 'float32'
  | 'float64'
  | 'float16'
  | 'int8'
  | 'uint8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'uint64'
  | 'bool'

export type TypedArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array

interface DTypeInfo {
  readonly code: number // ONNX TensorProto.DataType, also the native DType value
  readonly bytes: number
  readonly array: { new (n: number): TypedArray; new (b: ArrayBufferLike, o: number, n: number): TypedArray }
}

const info: Readonly<Record<DType, DTypeInfo>> = {
  float32: { code: 1, bytes: 4, array: Float32Array },
  uint8: { code: 2, bytes: 1, array: Uint8Array },
  int8: { code: 3, bytes: 1, array: Int8Array },
  uint16: { code: 4, bytes: 2, array: Uint16Array },
  int16: { code: 5, bytes: 2, array: Int16Array },
  int32: { code: 6, bytes: 4, array: Int32Array },
  int64: { code: 7, bytes: 8, array: BigInt64Array },
  bool: { code: 9, bytes: 1, array: Uint8Array },
  float16: { code: 10, bytes: 2, array: Uint16Array },
  float64: { code: 11, bytes: 8, array: Float64Array },
  uint32: { code: 12, bytes: 4, array: Uint32Array },
  uint64: { code: 13, bytes: 8, array: BigUint64Array },
}

const byCode = new Map<number, DType>(Object.entries(info).map(([k, v]) => [v.code, k as DType]))

export function dtypeCode(d: DType): number {
  return info[d].code
}

export function dtypeBytes(d: DType): number {
  return info[d].bytes
}

export function dtypeFromCode(code: number): DType | undefined {
  return byCode.get(code)
}

export function isDType(x: unknown): x is DType {
  return typeof x === 'string' && Object.hasOwn(info, x)
}

/** A zeroed TypedArray of n elements of dtype d. */
export function allocArray(d: DType, n: number): TypedArray {
  return new info[d].array(n)
}

/** A TypedArray view of dtype d over bytes (which must be aligned for d). */
export function viewArray(d: DType, buffer: ArrayBufferLike, byteOffset: number, n: number): TypedArray {
  return new info[d].array(buffer, byteOffset, n)
}

/** The dtype a TypedArray naturally carries (Uint8Array is 'uint8', never 'bool'). */
export function dtypeOfArray(a: TypedArray): DType {
  if (a instanceof Float32Array) return 'float32'
  if (a instanceof Float64Array) return 'float64'
  if (a instanceof BigInt64Array) return 'int64'
  if (a instanceof BigUint64Array) return 'uint64'
  if (a instanceof Int32Array) return 'int32'
  if (a instanceof Uint32Array) return 'uint32'
  if (a instanceof Int16Array) return 'int16'
  if (a instanceof Uint16Array) return 'uint16'
  if (a instanceof Int8Array) return 'int8'
  return 'uint8'
}

/** Whether arrays of this TypedArray class can hold dtype d. */
export function arrayFits(d: DType, a: TypedArray): boolean {
  if (d === 'bool') return a instanceof Uint8Array
  if (d === 'float16') return a instanceof Uint16Array
  return a instanceof info[d].array
}

export function isFloat(d: DType): boolean {
  return d === 'float32' || d === 'float64' || d === 'float16'
}
