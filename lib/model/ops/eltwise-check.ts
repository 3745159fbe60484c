// SPDX-License-Identifier: Apache-2.0
// Dtype and attribute checks shared by the elementwise operator definitions.
import { ModelFormatError } from '../../errors.js'
import type { DType } from '../dtype.js'
import type { ValueInfo } from '../ir.js'
import type { OpContext } from './op-def.js'
import { unsupported } from './op-util.js'

/** Throws unsupported() unless dtype is one of `allowed`. */
export function requireDtype(ctx: OpContext, dtype: DType, allowed: readonly DType[], what: string): void {
  if (!allowed.includes(dtype)) {
    throw unsupported(ctx, `${what} dtype ${dtype} is not supported (expected ${allowed.join(', ')})`)
  }
}

/** Throws a ModelFormatError unless every value has the dtype of the first. */
export function requireSameDtype(ctx: OpContext, values: readonly ValueInfo[], what: string): DType {
  const first = values[0]
  if (first === undefined) {
    throw new ModelFormatError(`node '${ctx.node.name}' (${ctx.node.opType}): ${what}: no inputs`)
  }
  for (const v of values) {
    if (v.dtype !== first.dtype) {
      throw new ModelFormatError(
        `node '${ctx.node.name}' (${ctx.node.opType}): ${what} must share one dtype (got ${first.dtype} and ${v.dtype})`,
      )
    }
  }
  return first.dtype
}

/** The node's present inputs in order; absent optional inputs in the middle are an error. */
export function presentInputs(ctx: OpContext): ValueInfo[] {
  const out: ValueInfo[] = []
  for (let i = 0; i < ctx.inputs.length; i++) {
    const v = ctx.inputs[i]
    if (v === undefined) {
      throw new ModelFormatError(`node '${ctx.node.name}' (${ctx.node.opType}): input ${i} is required`)
    }
    out.push(v)
  }
  return out
}

/** Whether the node's output i exists (present and named). */
export function hasOutput(ctx: OpContext, i: number): boolean {
  const name = ctx.node.outputs[i]
  return name !== undefined && name !== ''
}
