// SPDX-License-Identifier: Apache-2.0
// The contract every operator implements on the TypeScript side: a shape function that also
// normalizes attributes and says which native kernel computes the outputs.
//
// `infer` runs twice in an engine's life: once at open() on symbolic input dims (to describe the
// outputs and check the graph), and once per concrete input signature (to build the plan). It
// must work on both: use lib/model/dims.ts for arithmetic on dims. When every output's `values`
// is known (shape arithmetic: Shape, Gather on a shape, Concat of dims ...), the op is folded and
// no kernel runs. Otherwise `kernel()` is called, only with concrete dims, and returns the
// native call: the native op name (see binding.opNames()), which node inputs become its inputs,
// and its normalized attributes as ints/floats in the layout documented above the native op.
import type { Dim, Node, ValueInfo } from '../ir.js'

export interface OpContext {
  readonly node: Node
  readonly opset: number
  /** One entry per node input; undefined for an absent optional input. */
  readonly inputs: ReadonlyArray<ValueInfo | undefined>
  /**
   * The node's inputs at the ceiling of the shape bucket being planned (lib/runtime/bucket-plans.ts):
   * a kernel that picks its algorithm or tiling from the sizes picks them from these, so every shape of
   * the bucket runs the ceiling's choice (Nimble: one kernel configuration per bucket). Geometry (pads,
   * output sizes, workspaces) still comes from `inputs`. Absent outside buckets.
   */
  readonly ceiling?: ReadonlyArray<ValueInfo | undefined>
  /**
   * A dim of an output whose size may depend on the values of the inputs (NonZero's count, TopK's k when
   * the model computes it), at most `bound` (Nimble's upper-bound shape functions). `known`: the size
   * when this pass knows it (a k computed from shapes). The answer is the same kind of size in every pass
   * of an engine: a symbolic pass makes a size it does not know a symbol of its own; a concrete pass
   * gives such a symbol's size as read when the op ran, or before that its bound, where the plan is made,
   * even when it knows the value (the plans of all sizes then share their ops; lib/runtime/data-dims.ts).
   * `fromData`: the op computes the size at run time (and writes it as its last output). Absent where
   * sizes must be known before the run (a memory-budgeted package): op-util's dataDim() then refuses.
   */
  readonly dataDim?: (bound: Dim, known?: Dim) => DataDimAnswer
}

export interface DataDimAnswer {
  readonly dim: Dim
  readonly fromData: boolean
}

/** A plan-time transform of a constant kernel input (native/runtime/prepack.h). */
export interface Prepack {
  /** Position in KernelCall.inputs of the constant input to transform. */
  readonly input: number
  /** Native transform name, e.g. 'gemm_pack_b'. */
  readonly transform: string
  readonly ints: readonly number[]
}

export interface KernelCall {
  /** Native op name, e.g. 'Conv', 'BinaryAdd'. */
  readonly op: string
  /** For each native input, the index of the node input it is, or -1 for absent. */
  readonly inputs: readonly number[]
  readonly ints: readonly number[]
  readonly floats: readonly number[]
  /** How many of the node's outputs the kernel writes (default: all). */
  readonly outputs?: number
  /**
   * Scratch bytes the kernel needs (im2col columns, packed activation panels). The plan gives it a
   * uint8 tensor of this size, live only during the step, passed as one extra output after the
   * node's outputs.
   */
  readonly workspace?: number
  /**
   * Constant inputs the kernel reads pre-transformed (packed GEMM panels, Winograd filters). Only
   * request a prepack for an input whose ValueInfo has `tensor` (a constant); the transform runs
   * once per plan cache and its result lives in the arena's persistent region.
   */
  readonly prepack?: readonly Prepack[]
}

export interface OpResult {
  readonly outputs: readonly ValueInfo[]
  /** Output 0 is node input `aliasOf` with new dims (Reshape, Flatten, Squeeze, Unsqueeze, Identity). */
  readonly aliasOf?: number
  /** Called only when outputs are not all known and only with concrete dims. */
  readonly kernel?: () => KernelCall
}

export interface OpDef {
  /** ONNX op_type in the default domain. */
  readonly opType: string
  /** Lowest opset whose semantics this definition implements. */
  readonly sinceOpset?: number
  infer(ctx: OpContext): OpResult
}

/** Convenience for ops whose output dims are input dims (eltwise unary and friends). */
export function sameAs(v: ValueInfo, dtype = v.dtype): ValueInfo {
  return { dtype, dims: v.dims }
}

export function info(dtype: ValueInfo['dtype'], dims: readonly Dim[], values?: readonly Dim[]): ValueInfo {
  return values === undefined ? { dtype, dims } : { dtype, dims, values }
}
