// SPDX-License-Identifier: Apache-2.0
// The preload-aware memory planning problem and its plan (lib/plan/memory/preload-plan.ts plans it).
export type TensorKind = 'weight' | 'activation' | 'intermediate'

export interface PlanTensor {
  readonly kind: TensorKind
  readonly bytes: number
  /** First step that uses it (-1 for graph inputs). */
  readonly first: number
  /** Last step that uses it, inclusive (S for graph outputs). */
  readonly last: number
  readonly name?: string
}

export interface PreloadProblem {
  readonly steps: number
  readonly tensors: readonly PlanTensor[]
}

export interface PreloadOptions {
  /** Arena bytes available: the plan fits in [0, budget). */
  readonly budget: number
  /** Default true; false is the seed's 'w/o preload' ablation: weights load at their first step. */
  readonly preload?: boolean
  /** Default true: keep as many weights resident (loaded once) as the budget allows. */
  readonly pin?: boolean
  /**
   * Pin the weights of at most this many leading steps (default: as many as fit). Pinning less leaves a
   * wider preload window; the runtime picks this from measured compute and read times.
   */
  readonly maxPinSteps?: number
  /** Offset and size alignment of activations and intermediates (default 64). Weights always use 4096. */
  readonly alignment?: number
}

export interface Placement {
  readonly offset: number
  /** Bytes the tensor occupies: its size padded to its alignment (4096 for weights). */
  readonly size: number
  /**
   * Step from which the tensor occupies its bytes. For weights, the step at whose start its load may
   * begin (issued once comp(allocStep - 1) completes); 0 for pinned weights; first for the others.
   */
  readonly allocStep: number
  /** Loaded once and kept at the top of the arena across runs. */
  readonly pinned: boolean
}

export interface PreloadPlan {
  /** max(offset + size) over tensors; <= budget. */
  readonly arenaBytes: number
  /** One per tensor, in problem order. */
  readonly placements: readonly Placement[]
  /**
   * Allocation order per kind (tensor indices), the type-based static allocator's table
   * (kind, ordinal) -> offset. Weights in load-queue order: pinned first (loaded on the first run
   * only), then by allocStep, then first step; activations and intermediates by first step.
   */
  readonly order: { readonly weight: readonly number[]; readonly activation: readonly number[]; readonly intermediate: readonly number[] }
  /**
   * Per tensor: for a loaded weight, the step whose compute must finish before its load may start
   * (comp(i) < load(j) because they share bytes): the latest `last` among tensors at overlapping
   * addresses freed before the weight's allocStep. -1 for other tensors and weights without one.
   */
  readonly loadAfter: Int32Array
  readonly pinnedBytes: number
  /** Loaded weights with allocStep < first. */
  readonly preloadedWeights: number
  /** Steps whose weights were re-planned without preload (seed step 4). */
  readonly fallbackSteps: readonly number[]
}
