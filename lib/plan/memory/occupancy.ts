// SPDX-License-Identifier: Apache-2.0
// Placed tensors as rectangles in time (steps) x address (bytes), indexed by step for fast queries.
//
// A rectangle occupies bytes [offset, offset + size) over the inclusive step range [from, to]. Steps
// run from -1 (graph inputs, before step 0) to `steps` (graph outputs, after the last step). The
// indexes make the planner's two questions cheap without scanning every placed tensor:
//   - which bytes are busy at some step of [from, to]: the union of the per-step busy lists (kept
//     merged as rectangles are placed, so a one-step query is a copy);
//   - how that changes when `from` moves one step earlier: add the rectangles that end at from - 1.
// Removal (rare: the planner's undo of one step) rebuilds the busy lists of the steps it touched.
import { addBusy, busyFrom, type BusyList } from './address-space.js'

export class Occupancy {
  private readonly offset: Float64Array
  private readonly size: Float64Array
  private readonly from: Int32Array
  private readonly to: Int32Array
  private readonly atStep: number[][]
  private readonly busyAt: BusyList[]
  private readonly byTo: number[][]

  /** `tensors` bounds the ids; `steps` is the number of compute steps. */
  constructor(tensors: number, steps: number) {
    this.offset = new Float64Array(tensors)
    this.size = new Float64Array(tensors)
    this.from = new Int32Array(tensors)
    this.to = new Int32Array(tensors)
    const lists = (): number[][] => Array.from({ length: steps + 2 }, () => [])
    this.atStep = lists()
    this.busyAt = lists()
    this.byTo = lists()
  }

  /** Records tensor `id` at [offset, offset + size) over steps [from, to]. Zero-size tensors are not recorded. */
  place(id: number, offset: number, size: number, from: number, to: number): void {
    if (size <= 0) return
    this.offset[id] = offset
    this.size[id] = size
    this.from[id] = from
    this.to[id] = to
    for (let s = from; s <= to; s++) {
      this.atStep[s + 1]!.push(id)
      addBusy(this.busyAt[s + 1]!, offset, offset + size)
    }
    this.byTo[to + 1]!.push(id)
  }

  /** Forgets a placed tensor (the planner's undo when a step is re-planned without preload). */
  remove(id: number): void {
    if (this.size[id]! <= 0) return
    const drop = (list: number[]): void => {
      const i = list.lastIndexOf(id)
      if (i >= 0) list.splice(i, 1)
    }
    this.size[id] = 0
    for (let s = this.from[id]!; s <= this.to[id]!; s++) {
      drop(this.atStep[s + 1]!)
      this.busyAt[s + 1] = busyFrom(this.atStep[s + 1]!.flatMap((x) => [this.offset[x]!, this.offset[x]! + this.size[x]!]))
    }
    drop(this.byTo[this.to[id]! + 1]!)
  }

  /** Bytes busy at any step of [from, to]. */
  busyOver(from: number, to: number): BusyList {
    if (from === to) return this.busyAt[from + 1]!.slice()
    const ranges: number[] = []
    for (let s = from; s <= to; s++) for (const x of this.busyAt[s + 1]!) ranges.push(x)
    return busyFrom(ranges)
  }

  /**
   * Moves the start of a query window one step earlier: adds to `busy` (the bytes busy over
   * [from, to]) the rectangles that end at from - 1, giving the bytes busy over [from - 1, to].
   */
  extendEarlier(busy: BusyList, from: number): void {
    for (const id of this.byTo[from]!) addBusy(busy, this.offset[id]!, this.offset[id]! + this.size[id]!)
  }
}
