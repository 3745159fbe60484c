// SPDX-License-Identifier: Apache-2.0
// FlexNN's type-based static allocator: a placement turned into what the runtime needs, the allocation
// order per tensor kind ((kind, ordinal) -> offset) and the load dependencies comp(i) < load(j).
import type { Attempt } from './preload-place.js'
import { kindActivation, kindIntermediate, kindWeight, type Prepared } from './preload-problem.js'
import type { Placement, PreloadPlan } from './preload-types.js'

/**
 * The type-based static allocator's table: tensor indices per kind in the order their allocating
 * thread meets them. Weights in load-queue order (pinned first, then by allocStep, then first use);
 * activations and intermediates by first step. Ties keep problem order.
 */
function allocationOrder(prep: Prepared, a: Attempt): PreloadPlan['order'] {
  const ofKind = (k: number): number[] => Array.from(prep.kind.keys()).filter((i) => prep.kind[i] === k)
  const byFirst = (x: number, y: number): number => prep.first[x]! - prep.first[y]! || x - y
  const weight = ofKind(kindWeight).sort(
    (x, y) => a.pinned[y]! - a.pinned[x]! || a.allocStep[x]! - a.allocStep[y]! || byFirst(x, y),
  )
  return { weight, activation: ofKind(kindActivation).sort(byFirst), intermediate: ofKind(kindIntermediate).sort(byFirst) }
}

/**
 * Dependency 2 of the seed's online execution, comp(i) < load(j): for each loaded weight, the latest
 * step whose tensors used any of its bytes and were freed before the weight's allocStep. Compute runs
 * in order, so waiting for that one step covers every earlier user of the bytes. Tensors freed at or
 * after allocStep never share bytes with the weight (the plan keeps occupied intervals disjoint).
 */
function loadDependencies(prep: Prepared, a: Attempt): Int32Array {
  const loadAfter = new Int32Array(prep.count).fill(-1)
  const endingAt: number[][] = Array.from({ length: prep.steps + 2 }, () => [])
  for (let i = 0; i < prep.count; i++) if (a.pinned[i] === 0 && prep.size[i]! > 0) endingAt[prep.last[i]! + 1]!.push(i)
  const overlaps = (x: number, y: number): boolean =>
    a.offset[x]! < a.offset[y]! + prep.size[y]! && a.offset[y]! < a.offset[x]! + prep.size[x]!
  for (let w = 0; w < prep.count; w++) {
    if (prep.kind[w] !== kindWeight || a.pinned[w] === 1 || prep.size[w] === 0) continue
    for (let s = a.allocStep[w]! - 1; s >= -1 && loadAfter[w] === -1; s--) {
      if (endingAt[s + 1]!.some((x) => overlaps(x, w))) loadAfter[w] = s
    }
  }
  return loadAfter
}

/** The plan of a placement: offsets, the allocator's order per kind, and the load dependencies. */
export function typeBasedAllocation(prep: Prepared, a: Attempt): PreloadPlan {
  const placements: Placement[] = []
  let arenaBytes = 0
  let preloadedWeights = 0
  for (let i = 0; i < prep.count; i++) {
    const pinned = a.pinned[i] === 1
    placements.push({ offset: a.offset[i]!, size: prep.size[i]!, allocStep: a.allocStep[i]!, pinned })
    if (prep.size[i]! > 0) arenaBytes = Math.max(arenaBytes, a.offset[i]! + prep.size[i]!)
    if (prep.kind[i] === kindWeight && !pinned && a.allocStep[i]! < prep.first[i]!) preloadedWeights++
  }
  return {
    arenaBytes,
    placements,
    order: allocationOrder(prep, a),
    loadAfter: loadDependencies(prep, a),
    pinnedBytes: a.pinnedBytes,
    preloadedWeights,
    fallbackSteps: a.fallbackSteps,
  }
}
