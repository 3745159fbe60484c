// SPDX-License-Identifier: Apache-2.0
// choosePins: which weights a budget plan keeps resident, chosen among pin prefixes and suffixes by a
// caller's measure of each candidate plan. Pure given the planner and the measure.
import type { PinPrefixPlanner, PreloadPlan } from '../../plan/preload-plan.js'

/** A candidate plan's modelled makespan and the time its reads take (ms). */
export interface PinScore {
  readonly ms: number
  readonly reads: number
}

/**
 * The pinned set (the weights of a prefix or of a suffix of the steps stay resident) whose plan
 * `evaluate` finds fastest; `estimate` is an analytic first guess at the prefix (plan-budget.ts
 * evaluates by the pipeline simulation of plan-times.ts at the profiled compute times and bandwidth).
 *
 * Pinning saves reading those weights on every inference but narrows the window the other weights are
 * preloaded through, so past some size the disk idles while compute waits. A prefix pins the first
 * layers, whose loads have no compute before them to hide behind. A suffix pins the last layers: in a
 * CNN they hold the most bytes per FLOP (small planes, many channels), so their loads are the hardest
 * to hide, and the early layers' loads get the whole run's window. ResNet-152 at 100 MB, 2 threads,
 * its profile's compute times, reads at 1.2 GB/s: the best prefix pins 36.7 MB and simulates 181 ms,
 * the best suffix pins 56-68 MB and simulates 168 ms.
 *
 * Candidates: the estimate and a grid of 9 prefixes over [0, steps]; suffixes whose pinned bytes reach
 * 1/8 .. 10/8 of the most any prefix pinned (the late steps hold most bytes, so a grid over steps
 * would skip them); and the candidates halfway to the neighbours of the best prefix and of the best
 * suffix. Within 1% of the fastest, the one that reads least (as fast, and more margin when the disk
 * is slower than profiled). When no candidate fits, planPreload's own search.
 */
export function choosePins(planner: PinPrefixPlanner, evaluate: (plan: PreloadPlan) => PinScore, estimate = Infinity): PreloadPlan {
  const S = planner.steps
  // Only the figures of each candidate are kept, and the plan of the fastest so far: the heap growth of
  // planning counts in the memory budget (bookkeepingBytes). Keys: k >= 0 a prefix of k steps, -t a
  // suffix of t steps.
  const tried = new Map<number, { ms: number; reads: number; pinned: number } | undefined>()
  let kept: { key: number; plan: PreloadPlan } | undefined
  const planOf = (key: number): PreloadPlan | undefined => (key >= 0 ? planner.withPrefix(key) : planner.withSuffix(-key))
  const at = (key: number): void => {
    if (tried.has(key)) return
    const plan = planOf(key)
    if (plan === undefined) return void tried.set(key, undefined)
    const t = evaluate(plan)
    if (kept === undefined || t.ms < tried.get(kept.key)!.ms) kept = { key, plan }
    tried.set(key, { ms: t.ms, reads: t.reads, pinned: plan.pinnedBytes })
  }
  const prefix = (k: number): void => at(Math.max(0, Math.min(S, Math.round(k))))
  const suffix = (t: number): void => at(-Math.max(0, Math.min(S, Math.round(t))))
  const best = (family?: (key: number) => boolean): number | undefined => {
    let fastest = Infinity
    for (const [key, v] of tried) if (v !== undefined && (family === undefined || family(key))) fastest = Math.min(fastest, v.ms)
    let k: number | undefined
    for (const [key, v] of tried) {
      if (v === undefined || v.ms > fastest * 1.01 || (family !== undefined && !family(key))) continue
      if (k === undefined || v.reads < tried.get(k)!.reads) k = key
    }
    return k
  }
  if (Number.isFinite(estimate)) prefix(estimate)
  const grid = 8
  for (let i = 0; i <= grid; i++) prefix((i * S) / grid)
  const nearPrefix = best((key) => key >= 0)
  if (nearPrefix !== undefined) {
    prefix(nearPrefix - S / (2 * grid))
    prefix(nearPrefix + S / (2 * grid))
  }
  // Suffixes at pinned-byte fractions (1/8 .. 10/8) of the largest prefix that planned (about the bytes
  // that fit beside the rest), then the suffix lengths halfway to the best one's neighbours.
  const tb = planner.trailingBytes
  let reach = 0
  for (const v of tried.values()) if (v !== undefined) reach = Math.max(reach, v.pinned)
  const lengths: number[] = []
  for (let i = 1; i <= grid + 2; i++) {
    let t = 0
    while (t < S && tb[t + 1]! <= (i * reach) / grid) t++
    if (t > 0 && !lengths.includes(t)) lengths.push(t)
  }
  for (const t of lengths) suffix(t)
  const nearSuffix = best((key) => key < 0)
  if (nearSuffix !== undefined) {
    const i = lengths.indexOf(-nearSuffix)
    for (const j of [i - 1, i + 1]) {
      const other = j < 0 ? 0 : lengths[j]
      if (other !== undefined) suffix((other - nearSuffix) / 2) // halfway between t = -nearSuffix and other
    }
  }
  const k = best()
  if (k === undefined) return planner.largest()
  return kept!.key === k ? kept!.plan : planOf(k)!
}
