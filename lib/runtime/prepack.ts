// SPDX-License-Identifier: Apache-2.0
// Runs a kernel's prepack transform (native) on a constant's host data, or describes it as a job that
// writes the result straight into the arena (executor.apply, native writeBatch).
import { dtypeCode, dtypeFromCode, viewArray, type DType } from '../model/dtype.js'
import type { TensorData } from '../model/ir.js'
import { numel, tensorBytes } from '../model/ir.js'
import type { Prepack } from '../model/ops/op-def.js'
import { binding } from '../native/binding.js'
import { fromNative } from './native-errors.js'

/** Runs a native prepack transform on a host tensor. */
export function runPrepack(t: TensorData, p: Prepack, node: string): TensorData {
  try {
    const r = binding().prepack(p.transform, { dtype: dtypeCode(t.dtype), dims: t.dims, data: t.data }, p.ints)
    const dtype = dtypeFromCode(r.dtype) as DType
    return { dtype, dims: r.dims, data: viewArray(dtype, r.data, 0, numel(r.dims)) }
  } catch (err) {
    throw fromNative(err, [node])
  }
}

/** What a transform of `t` produces (its dtype and dims), without running it. */
export function prepackShape(t: TensorData, p: Prepack, node: string): { dtype: DType; dims: number[] } {
  try {
    const r = binding().prepackShape(p.transform, { dtype: dtypeCode(t.dtype), dims: t.dims, data: tensorBytes(t) }, p.ints)
    return { dtype: dtypeFromCode(r.dtype) as DType, dims: r.dims }
  } catch (err) {
    throw fromNative(err, [node])
  }
}
