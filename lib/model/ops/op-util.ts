// SPDX-License-Identifier: Apache-2.0
// Helpers shared by operator definitions: required inputs, known values, error construction.
import { ModelFormatError, ShapeError, UnsupportedOperatorError, ValueNeededError } from '../../errors.js'
import type { Dim, ValueInfo } from '../ir.js'
import { isConcrete } from '../dims.js'
import type { DataDimAnswer, OpContext } from './op-def.js'

/** Node input i, which must be present. */
export function input(ctx: OpContext, i: number): ValueInfo {
  const v = ctx.inputs[i]
  if (v === undefined) {
    throw new ModelFormatError(`node '${ctx.node.name}' (${ctx.node.opType}): input ${i} is required`)
  }
  return v
}

/** Node input i if present. */
export function optionalInput(ctx: OpContext, i: number): ValueInfo | undefined {
  return ctx.inputs[i]
}

/** Known contents of input i as numbers, or undefined when unknown or symbolic. */
export function knownNumbers(ctx: OpContext, i: number): number[] | undefined {
  const v = ctx.inputs[i]?.values
  if (v === undefined || !v.every(isConcrete)) return undefined
  return v as number[]
}

/** Known contents of input i (may contain symbols), or undefined. */
export function knownDims(ctx: OpContext, i: number): readonly Dim[] | undefined {
  return ctx.inputs[i]?.values
}

/**
 * The error for an input whose contents an op needs at plan time but which are unknown. The
 * engine catches it and re-plans with the values of the graph inputs it derives from; only if
 * that cannot help does the user see it.
 */
export function valueNeeded(ctx: OpContext, i: number, what: string): ValueNeededError {
  return new ValueNeededError(
    ctx.node.name,
    ctx.node.opType,
    ctx.opset,
    i,
    `${what} (input ${i}) must be computable before the run (a constant, a shape computation or a graph input)`,
  )
}

/** Known numbers of input i; throws a ValueNeededError if they are not known at plan time. */
export function requireNumbers(ctx: OpContext, i: number, what: string): number[] {
  const v = knownNumbers(ctx, i)
  if (v === undefined) throw valueNeeded(ctx, i, what)
  return v
}

export function shapeError(ctx: OpContext, message: string): ShapeError {
  return new ShapeError(`node '${ctx.node.name}' (${ctx.node.opType}): ${message}`)
}

export function unsupported(ctx: OpContext, detail: string): UnsupportedOperatorError {
  return new UnsupportedOperatorError(ctx.node.name, ctx.node.opType, ctx.opset, detail)
}

/** The number of elements of dims when concrete, else undefined. */
export function knownCount(dims: readonly Dim[]): number | undefined {
  let n = 1
  for (const d of dims) {
    if (!isConcrete(d)) return undefined
    n *= d
  }
  return n
}

/**
 * An output dim that may depend on the input values, at most `bound` (OpContext.dataDim); `known` when
 * this pass knows it. Where the caller plans every size before the run, a known size is taken and an
 * unknown one refused with UnsupportedOperatorError.
 */
export function dataDim(ctx: OpContext, bound: Dim, what: string, known?: Dim): DataDimAnswer {
  if (ctx.dataDim !== undefined) return ctx.dataDim(bound, known)
  if (known !== undefined) return { dim: known, fromData: false }
  throw unsupported(ctx, `${what} depends on the values of its inputs, which a memory-budgeted or elastic package cannot plan ahead; open the ONNX model with open(), which plans it at its upper bound`)
}
