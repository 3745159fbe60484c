// SPDX-License-Identifier: Apache-2.0
// Free-interval search in one address range: busy lists of byte ranges and the gaps between them.
//
// A busy list is a flat array [start0, end0, start1, end1, ...] of half-open byte ranges, sorted by
// start, disjoint and not touching (adjacent ranges are merged). The searches look at the gaps a busy
// list leaves inside a window [lo, hi) and place a block of `size` bytes at an `align`-aligned offset.
// Every search returns -1 when no gap holds the block. A zero-size block fits at lo.
import { alignDown, alignUp } from '../../align.js'

/** Sorted, merged busy ranges as [start0, end0, start1, end1, ...]. */
export type BusyList = number[]

/** Index of the first range whose end is >= start (ranges ending before `start` stay untouched). */
function firstTouching(busy: BusyList, start: number): number {
  let lo = 0
  let hi = busy.length >> 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (busy[2 * mid + 1]! < start) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Adds [start, end) to a busy list in place, merging it with the ranges it overlaps or touches. */
export function addBusy(busy: BusyList, start: number, end: number): void {
  if (end <= start) return
  const i = firstTouching(busy, start)
  let j = i
  let s = start
  let e = end
  while (2 * j < busy.length && busy[2 * j]! <= end) {
    s = Math.min(s, busy[2 * j]!)
    e = Math.max(e, busy[2 * j + 1]!)
    j++
  }
  // In place, without splice (which allocates the removed elements' array on every call): opening
  // ResNet-152 at 100 MB allocated 23 of its 89 MB in splice (V8's sampling heap profiler).
  const removed = j - i
  if (removed === 1) {
    busy[2 * i] = s
    busy[2 * i + 1] = e
    return
  }
  if (removed === 0) {
    busy.push(0, 0)
    busy.copyWithin(2 * i + 2, 2 * i, busy.length - 2)
  } else {
    busy.copyWithin(2 * i + 2, 2 * j)
    busy.length -= 2 * (removed - 1)
  }
  busy[2 * i] = s
  busy[2 * i + 1] = e
}

/** Builds a busy list from unsorted ranges given as [start0, end0, start1, end1, ...]. */
export function busyFrom(ranges: readonly number[]): BusyList {
  const n = ranges.length >> 1
  const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => ranges[2 * a]! - ranges[2 * b]!)
  const busy: BusyList = []
  for (const i of idx) {
    const s = ranges[2 * i]!
    const e = ranges[2 * i + 1]!
    if (e <= s) continue
    const k = busy.length
    if (k > 0 && s <= busy[k - 1]!) busy[k - 1] = Math.max(busy[k - 1]!, e)
    else busy.push(s, e)
  }
  return busy
}

/**
 * Calls `visit(start, end)` for each gap of `busy` inside [lo, hi), lowest first, until it returns true.
 * Empty gaps are visited too (a zero-size block fits in them).
 */
function eachGap(busy: BusyList, lo: number, hi: number, visit: (start: number, end: number) => boolean): void {
  let start = lo
  for (let i = 0; i < busy.length && start < hi; i += 2) {
    const s = busy[i]!
    const e = busy[i + 1]!
    if (e <= start) continue
    if (s > start && visit(start, Math.min(s, hi))) return
    start = Math.max(start, e)
  }
  if (start <= hi) visit(start, hi)
}

/** Lowest aligned offset where `size` bytes fit in a gap. */
export function firstFit(busy: BusyList, size: number, align: number, lo: number, hi: number): number {
  let found = -1
  eachGap(busy, lo, hi, (s, e) => {
    const o = alignUp(s, align)
    if (o + size <= e) found = o
    return found >= 0
  })
  return found
}

/** Highest aligned offset where `size` bytes fit in a gap. */
export function lastFit(busy: BusyList, size: number, align: number, lo: number, hi: number): number {
  let found = -1
  eachGap(busy, lo, hi, (s, e) => {
    const o = alignDown(e - size, align)
    if (o >= s && o >= 0) found = o
    return false
  })
  return found
}

/** Start (aligned) of the smallest gap that holds `size` bytes; ties go to the lower address. */
export function bestFit(busy: BusyList, size: number, align: number, lo: number, hi: number): number {
  let found = -1
  let foundGap = Infinity
  eachGap(busy, lo, hi, (s, e) => {
    const o = alignUp(s, align)
    if (o + size <= e && e - s < foundGap) {
      found = o
      foundGap = e - s
    }
    return false
  })
  return found
}
