// SPDX-License-Identifier: Apache-2.0
// Constant folding with the native kernels: shape inference (lib/model/infer-graph.ts) calls it to compute
// a node whose inputs are all known, through the addon's runOp.
import { allocArray, dtypeCode } from '../model/dtype.js'
import type { FoldFn } from '../model/infer-graph.js'
import { numel } from '../model/ir.js'
import { binding } from '../native/binding.js'
import { fromNative } from './native-errors.js'
import { runPrepack } from './prepack.js'

export const foldNative: FoldFn = (node, call, inputs, outputs) => {
  const n = call.outputs ?? outputs.length
  const outs = outputs.slice(0, n).map((o) => ({ dtype: o.dtype, dims: o.dims as number[], data: allocArray(o.dtype, numel(o.dims as number[])) }))
  const ins = call.inputs.map((i, j) => {
    let t = i < 0 ? undefined : inputs[i]
    const p = call.prepack?.find((q) => q.input === j)
    if (t !== undefined && p !== undefined) t = runPrepack(t, p, node.name)
    return t === undefined ? null : { dtype: dtypeCode(t.dtype), dims: t.dims, data: t.data }
  })
  const nativeOuts = outs.map((o) => ({ dtype: dtypeCode(o.dtype), dims: o.dims, data: o.data as ArrayBufferView }))
  if (call.workspace) nativeOuts.push({ dtype: dtypeCode('uint8'), dims: [call.workspace], data: new Uint8Array(call.workspace) })
  try {
    binding().runOp(call.op, ins, nativeOuts, call.ints, call.floats)
  } catch (err) {
    throw fromNative(err, [node.name])
  }
  return outs
}
