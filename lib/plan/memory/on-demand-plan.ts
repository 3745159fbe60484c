// SPDX-License-Identifier: Apache-2.0
// The 'w/o static plan' ablation: a dynamic first-fit allocator simulated in execution order.
//
// Before step 0 the graph inputs are allocated; at each step its weights (loaded on demand, no
// preload, no pinning), then its activations, then its intermediates get the lowest free address
// with their alignment, in problem order within a kind; after the step every tensor whose last use
// it was is freed. The arena is what such an allocator would need, fragmentation included, which
// is what the preload-aware static plan is compared with.
import { busyFrom, firstFit } from './address-space.js'
import { typeBasedAllocation } from './type-allocator.js'
import { kindActivation, kindIntermediate, kindWeight, prepare, type Prepared } from './preload-problem.js'
import type { PreloadOptions, PreloadPlan, PreloadProblem } from './preload-types.js'

/** Tensor indices per step (index = step + 1) in the order an on-demand allocator meets them. */
function allocationsByStep(prep: Prepared): number[][] {
  const at: number[][] = Array.from({ length: prep.steps + 2 }, () => [])
  for (const kind of [kindWeight, kindActivation, kindIntermediate]) {
    for (let i = 0; i < prep.count; i++) if (prep.kind[i] === kind) at[prep.first[i]! + 1]!.push(i)
  }
  return at
}

export function planOnDemandFirstFit(problem: PreloadProblem, options: Pick<PreloadOptions, 'alignment'> = {}): PreloadPlan {
  const prep = prepare(problem, options.alignment)
  const offset = new Float64Array(prep.count)
  const frees: number[][] = Array.from({ length: prep.steps + 2 }, () => [])
  const live = new Set<number>()
  const allocations = allocationsByStep(prep)
  for (let s = -1; s <= prep.steps; s++) {
    for (const i of allocations[s + 1]!) {
      const ranges: number[] = []
      for (const j of live) ranges.push(offset[j]!, offset[j]! + prep.size[j]!)
      const align = prep.kind[i] === kindWeight ? 4096 : prep.alignment
      offset[i] = firstFit(busyFrom(ranges), prep.size[i]!, align, 0, Infinity)
      live.add(i)
      frees[prep.last[i]! + 1]!.push(i)
    }
    for (const i of frees[s + 1]!) live.delete(i)
  }
  const attempt = { offset, allocStep: Int32Array.from(prep.first), pinned: new Uint8Array(prep.count), pinnedBytes: 0, fallbackSteps: [] }
  return typeBasedAllocation(prep, attempt)
}
