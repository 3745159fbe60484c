// SPDX-License-Identifier: Apache-2.0
// Busy lists and gap searches (lib/plan/memory/address-space.ts) against a byte map of the same ranges.
import t from 'tap'
import { addBusy, bestFit, busyFrom, firstFit, lastFit, type BusyList } from '../../lib/plan/memory/address-space.js'
import { prng } from '../helpers/plan-problems.js'

const space = 256

/** The byte map of a busy list, checking that the list is sorted, disjoint and merged. */
function bytesOf(busy: BusyList): { map: Uint8Array; problem?: string } {
  const map = new Uint8Array(space)
  if (busy.length % 2 !== 0) return { map, problem: `odd length ${busy.length}` }
  for (let i = 0; i < busy.length; i += 2) {
    const s = busy[i]!
    const e = busy[i + 1]!
    if (!(s < e)) return { map, problem: `range ${i / 2} [${s}, ${e}) is empty` }
    if (i > 0 && s <= busy[i - 1]!) return { map, problem: `range ${i / 2} starts at ${s}, not after the previous end ${busy[i - 1]}` }
    map.fill(1, s, e)
  }
  return { map }
}

/** Every aligned offset in [lo, hi) where `size` free bytes fit, by brute force. */
function fits(map: Uint8Array, size: number, align: number, lo: number, hi: number): number[] {
  const out: number[] = []
  for (let o = Math.ceil(lo / align) * align; o + size <= hi; o += align) {
    if (map.subarray(o, o + size).every((b) => b === 0)) out.push(o)
  }
  return out
}

t.test('addBusy keeps a merged list equal to the union of the ranges added, in any order', async (t) => {
  const rand = prng(17)
  let failures = 0
  for (let c = 0; c < 400; c++) {
    const busy: BusyList = []
    const want = new Uint8Array(space)
    const ranges: number[] = []
    const n = 1 + Math.floor(rand() * 24)
    for (let k = 0; k < n; k++) {
      const s = Math.floor(rand() * space)
      const e = Math.min(space, s + Math.floor(rand() * 40))
      addBusy(busy, s, e)
      ranges.push(s, e)
      if (e > s) want.fill(1, s, e)
      const got = bytesOf(busy)
      const same = got.map.every((b, i) => b === want[i])
      if (got.problem !== undefined || !same) {
        if (failures++ < 3) t.fail(`case ${c}, after [${s}, ${e}): ${got.problem ?? 'bytes differ from the union'} (${busy.join(',')})`)
      }
    }
    const rebuilt = busyFrom(ranges)
    if (rebuilt.join(',') !== busy.join(',') && failures++ < 3) t.fail(`case ${c}: busyFrom ${rebuilt.join(',')} against addBusy ${busy.join(',')}`)
  }
  t.equal(failures, 0, '400 random sequences of adds')
})

t.test('firstFit, lastFit and bestFit pick the lowest, highest and tightest free slot', async (t) => {
  const rand = prng(23)
  let failures = 0
  for (let c = 0; c < 400; c++) {
    const busy: BusyList = []
    for (let k = Math.floor(rand() * 10); k > 0; k--) {
      const s = Math.floor(rand() * space)
      addBusy(busy, s, Math.min(space, s + 1 + Math.floor(rand() * 50)))
    }
    const { map } = bytesOf(busy)
    const size = 1 + Math.floor(rand() * 60)
    const align = [1, 4, 16][Math.floor(rand() * 3)]!
    const lo = Math.floor(rand() * 32)
    const hi = space - Math.floor(rand() * 32)
    const all = fits(map, size, align, lo, hi)
    const first = firstFit(busy, size, align, lo, hi)
    const last = lastFit(busy, size, align, lo, hi)
    const best = bestFit(busy, size, align, lo, hi)
    const label = `case ${c}: size ${size}, align ${align}, [${lo}, ${hi}), busy ${busy.join(',')}`
    const bad = (what: string): void => {
      if (failures++ < 3) t.fail(`${label}: ${what}`)
    }
    if (first !== (all[0] ?? -1)) bad(`firstFit ${first}, want ${all[0] ?? -1}`)
    if (last !== (all.at(-1) ?? -1)) bad(`lastFit ${last}, want ${all.at(-1) ?? -1}`)
    if ((best < 0) !== (all.length === 0)) bad(`bestFit ${best} with ${all.length} slots`)
    if (best >= 0) {
      // the gap around best is free and no gap holding the block is smaller
      if (!all.includes(best)) bad(`bestFit ${best} is not a free slot`)
      const gapOf = (o: number): number => {
        let s = o
        let e = o
        while (s > lo && map[s - 1] === 0) s--
        while (e < hi && map[e] === 0) e++
        return e - s
      }
      const smallest = Math.min(...all.map(gapOf))
      if (gapOf(best) !== smallest) bad(`bestFit ${best} in a gap of ${gapOf(best)}, but one of ${smallest} holds it`)
    }
  }
  t.equal(failures, 0, '400 random busy lists and blocks')
})
