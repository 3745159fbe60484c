// SPDX-License-Identifier: Apache-2.0
// Conversions between host tensors and the `values` shape inference carries for small tensors.
import { allocArray, isFloat } from './dtype.js'
import type { Dim, ExternalTensor, TensorData, ValueInfo } from './ir.js'
import { isExternal, numel } from './ir.js'
import { allConcrete } from './dims.js'

/** Tensors up to this many elements carry their contents as `values` through shape inference. */
export const maxValuesLength = 4096

/**
 * The ValueInfo of a constant: dims, the tensor, and its contents when small. The contents are made on
 * first read: most small constants are weights (biases, depthwise filters) that shape arithmetic never
 * reads, and converting each to an array of numbers up front was a quarter of what opening a package
 * allocated (MobileNetV2: 4.8 of 19 MB), enough to make V8 double its young generation.
 */
export function constantInfo(t: TensorData | ExternalTensor): ValueInfo {
  if (isExternal(t) || numel(t.dims) > maxValuesLength || t.dtype === 'float16') {
    return { dtype: t.dtype, dims: t.dims, tensor: t }
  }
  return {
    dtype: t.dtype,
    dims: t.dims,
    tensor: t,
    get values(): number[] {
      let values = valuesOf.get(t.data)
      if (values === undefined) valuesOf.set(t.data, (values = Array.from(t.data as ArrayLike<number | bigint>, (x) => Number(x))))
      return values
    },
  }
}

/**
 * The contents of constants as numbers, made once per array: a graph's constants get a new ValueInfo
 * from every inference pass over it (a shape's constants recomputed per new shape read the same
 * position-id table each time, 30 µs of each new BERT shape's 100).
 */
const valuesOf = new WeakMap<object, number[]>()

/** A host tensor holding concrete values (throws if any value is symbolic). */
export function tensorFromValues(v: ValueInfo): TensorData | undefined {
  if (v.values === undefined || !allConcrete(v.values) || !allConcrete(v.dims)) return undefined
  const data = allocArray(v.dtype, v.values.length)
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    v.values.forEach((x, i) => (data[i] = BigInt(Math.trunc(x as number))))
  } else {
    ;(data as Float32Array).set(v.values as number[])
  }
  return { dtype: v.dtype, dims: v.dims as number[], data }
}

/** The host tensor of a value when its contents are fully known (constant or concrete values). */
export function hostTensor(v: ValueInfo): TensorData | undefined {
  if (v.tensor !== undefined && !isExternal(v.tensor)) return v.tensor
  return tensorFromValues(v)
}

/** Whether values of this dtype are integers (shape arithmetic happens on these). */
export function isIntegral(v: ValueInfo): boolean {
  return !isFloat(v.dtype)
}

export function sameDims(a: readonly Dim[], b: readonly Dim[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i])
}
