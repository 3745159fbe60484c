// SPDX-License-Identifier: Apache-2.0
// Static memory planning for activations: offsets in one region from tensor lifetimes.
//
// Greedy by size (largest first, as XNNPACK's planner): each buffer goes to the lowest offset
// where it overlaps no already-placed buffer whose lifetime intersects its own. Lifetimes are
// inclusive step ranges. Pure: the same requests always give the same plan.
import { alignUp } from '../../align.js'

export interface BufferRequest {
  readonly bytes: number
  /** First step that writes or reads it (-1: before the first step, e.g. graph inputs). */
  readonly first: number
  /** Last step that reads it (inclusive). */
  readonly last: number
}

export interface MemoryPlan {
  /** Offset of each request, in request order. */
  readonly offsets: readonly number[]
  /** Bytes the region needs. */
  readonly size: number
}

export const planAlignment = 64


function overlapsInTime(a: BufferRequest, b: BufferRequest): boolean {
  return a.first <= b.last && b.first <= a.last
}

export function planMemory(requests: readonly BufferRequest[], alignment = planAlignment): MemoryPlan {
  const order = requests
    .map((r, i) => i)
    .sort((i, j) => requests[j]!.bytes - requests[i]!.bytes || requests[i]!.first - requests[j]!.first || i - j)
  const offsets = new Array<number>(requests.length).fill(0)
  const placed: number[] = []
  let size = 0
  for (const i of order) {
    const r = requests[i]!
    const bytes = alignUp(r.bytes, alignment)
    const busy = placed
      .filter((j) => overlapsInTime(r, requests[j]!))
      .map((j) => [offsets[j]!, offsets[j]! + alignUp(requests[j]!.bytes, alignment)] as const)
      .sort((a, b) => a[0] - b[0])
    let offset = 0
    for (const [start, end] of busy) {
      if (offset + bytes <= start) break
      offset = Math.max(offset, end)
    }
    offsets[i] = offset
    placed.push(i)
    size = Math.max(size, offset + bytes)
  }
  return { offsets, size }
}
