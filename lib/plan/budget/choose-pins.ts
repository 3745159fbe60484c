// SPDX-License-Identifier: Apache-2.0
// choosePins: which weights a budget plan keeps resident, chosen among pin prefixes and suffixes by a
// caller's measure of each candidate plan. Pure given the planner and the measure.
import type { PinPrefixPlanner, PreloadPlan } from '../memory/preload-plan.js'

/** A candidate plan's modelled makespan and the time its reads take (ms). */
export interface PinScore {
  readonly ms: number
  readonly reads: number
}

/**
 * The pinned set whose plan `evaluate` finds fastest; `estimate` is an analytic first guess at the
 * prefix (plan-budget.ts evaluates by the pipeline simulation of plan-times.ts at the profiled compute
 * times and bandwidth).
 *
 * Pinning saves reading those weights on every inference but narrows the window the other weights are
 * preloaded through, so past some size the disk idles while compute waits. Two families:
 *   prefix   the first layers, whose loads have no compute before them to hide behind;
 *   suffix   the last layers: in a CNN they hold the most bytes per FLOP (small planes, many
 *            channels), so their loads are the hardest to hide, and the early layers' loads get the
 *            whole run's window.
 * ResNet-152 at 100 MB, 2 threads, its profile's compute times, reads at 1.2 GB/s: the best prefix
 * simulates 181 ms, the best suffix 168 ms. (Pinning the steps with the most bytes per compute-ms,
 * wherever they are, simulated 2-5% better again, but doubled the re-planning time, and no throttle
 * slower than this disk made it choose differently, so it is not a candidate.)
 *
 * Candidates: the estimate and a grid of 9 prefixes over [0, steps]; suffixes whose pinned bytes reach
 * 1/8 .. 10/8 of the most any prefix pinned (a grid over steps would skip the late steps, which hold
 * most bytes); and the candidates halfway to the neighbours of the best of each family. Within 1% of
 * the fastest, the one that reads least (as fast, and more margin when the disk is slower than
 * profiled). When no candidate fits, planPreload's own search.
 */
export function choosePins(planner: PinPrefixPlanner, evaluate: (plan: PreloadPlan) => PinScore, estimate = Infinity): PreloadPlan {
  const S = planner.steps
  const bytes = planner.stepBytes
  // Only the figures of each candidate are kept, and the plan of the fastest so far: the heap growth of
  // planning counts in the memory budget (bookkeepingBytes). Keys: 'p<k>' a prefix of k steps, 's<t>'
  // a suffix of t steps.
  const tried = new Map<string, { ms: number; reads: number; pinned: number; make: () => PreloadPlan | undefined } | undefined>()
  let kept: { key: string; plan: PreloadPlan } | undefined
  const at = (key: string, make: () => PreloadPlan | undefined): void => {
    if (tried.has(key)) return
    const plan = make()
    if (plan === undefined) return void tried.set(key, undefined)
    const t = evaluate(plan)
    if (kept === undefined || t.ms < tried.get(kept.key)!.ms) kept = { key, plan }
    tried.set(key, { ms: t.ms, reads: t.reads, pinned: plan.pinnedBytes, make })
  }
  const clampSteps = (n: number): number => Math.max(0, Math.min(S, Math.round(n)))
  const prefix = (k: number): void => {
    const n = clampSteps(k)
    at(`p${n}`, () => planner.withPrefix(n))
  }
  const suffix = (t: number): void => {
    const n = clampSteps(t)
    at(n === 0 ? 'p0' : `s${n}`, () => planner.withSteps(Array.from({ length: n }, (_, i) => S - n + i)))
  }
  const best = (family?: string): string | undefined => {
    const inFamily = (key: string): boolean => family === undefined || key[0] === family
    let fastest = Infinity
    for (const [key, v] of tried) if (v !== undefined && inFamily(key)) fastest = Math.min(fastest, v.ms)
    let k: string | undefined
    for (const [key, v] of tried) {
      if (v === undefined || v.ms > fastest * 1.01 || !inFamily(key)) continue
      if (k === undefined || v.reads < tried.get(k)!.reads) k = key
    }
    return k
  }
  if (Number.isFinite(estimate)) prefix(estimate)
  const grid = 8
  for (let i = 0; i <= grid; i++) prefix((i * S) / grid)
  const nearPrefix = best('p')
  if (nearPrefix !== undefined) {
    const k = Number(nearPrefix.slice(1))
    prefix(k - S / (2 * grid))
    prefix(k + S / (2 * grid))
  }
  // Suffixes at pinned-byte fractions (1/8 .. 10/8) of the most a prefix pinned (about the bytes that
  // fit beside the rest), then halfway to the best one's neighbours.
  let reach = 0
  for (const v of tried.values()) if (v !== undefined) reach = Math.max(reach, v.pinned)
  const lengths: number[] = []
  for (let i = 1, t = 0, sum = 0; i <= grid + 2; i++) {
    while (t < S && sum + bytes[S - 1 - t]! <= (i * reach) / grid) sum += bytes[S - 1 - t++]!
    if (t > 0 && !lengths.includes(t)) lengths.push(t)
  }
  for (const t of lengths) suffix(t)
  const nearSuffix = best('s')
  if (nearSuffix !== undefined) {
    const t = Number(nearSuffix.slice(1))
    const i = lengths.indexOf(t)
    for (const other of [i > 0 ? lengths[i - 1]! : 0, lengths[i + 1]]) if (other !== undefined) suffix((t + other) / 2)
  }
  const k = best()
  if (k === undefined) return planner.largest()
  return kept!.key === k ? kept!.plan : tried.get(k)!.make()!
}
