// SPDX-License-Identifier: Apache-2.0
// Tensors for calling native ops directly (binding().runOp): float32 with an optional fill, and uint8
// workspaces.
const F32 = 1
const U8 = 2

export interface OpTensor {
  readonly dtype: number
  readonly dims: number[]
  readonly data: Float32Array | Uint8Array
}

/** A float32 tensor of `dims`, zeros or fill(i) at flat index i. */
export function f32(dims: number[], fill?: (i: number) => number): OpTensor & { readonly data: Float32Array } {
  const data = new Float32Array(dims.reduce((a, d) => a * d, 1))
  if (fill) data.forEach((_, i) => (data[i] = fill(i)))
  return { dtype: F32, dims, data }
}

/** A uint8 workspace of n bytes. */
export function u8(n: number): OpTensor {
  return { dtype: U8, dims: [n], data: new Uint8Array(n) }
}
