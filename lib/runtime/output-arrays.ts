// SPDX-License-Identifier: Apache-2.0
// The arrays infer() returns, one per graph output, and the run's output buffers: the outputs read
// from program tensors, in graph order (copied out, or written in place by the op that computes them:
// lib/plan/memory/outputs-in-place.ts); constants and inputs passed through are filled here.
import { allocArray } from '../model/dtype.js'
import { numel } from '../model/ir.js'
import type { Tensor } from '../model/tensor.js'
import type { ProgramOutput } from '../plan/execution-plan.js'

export function outputArrays(
  outputs: readonly ProgramOutput[],
  inputOf: (name: string) => Tensor,
): { readonly outputs: Record<string, Tensor>; readonly buffers: Array<[number, ArrayBufferView]> } {
  const out: Record<string, Tensor> = {}
  const buffers: Array<[number, ArrayBufferView]> = []
  for (const o of outputs) {
    const data = allocArray(o.dtype, numel(o.dims))
    if (o.source.kind === 'constant') data.set(o.source.data.data as never)
    else if (o.source.kind === 'input') data.set(inputOf(o.source.name).data as never)
    else buffers.push([o.source.tensor, data])
    out[o.name] = { dtype: o.dtype, dims: o.dims, data }
  }
  return { outputs: out, buffers }
}
