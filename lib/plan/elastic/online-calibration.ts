// SPDX-License-Identifier: Apache-2.0
// Online calibration of an elastic engine's latency model: from the measured / modelled time of its
// recent inferences, the factor its planner should allow for so that 95% of inferences finish
// within 1.05 T (the planner aims at T * 1.05 / factor).
//
// The two things that move the ratio are kept apart. The machine's speed drifts (on a shared VM here
// the same layer took 1.2 ms and 2.7 ms a few minutes apart): that is the *scale*, the median of the
// last `scaleWindow` ratios, which follows a drift within a few inferences and ignores single
// spikes. Inferences also jitter around that scale: the *spread*, the p95 over the longer
// `spreadWindow` of each ratio divided by the scale at its time (so a drift inside the window is not
// counted as jitter). factor = scale x spread. A p95 of raw ratios over a short window instead is one
// or two outliers, and re-planning on it swings the plan between too large and too small.

export interface OnlineCalibration {
  /** Ratios kept (the spread window). */
  readonly spreadWindow: number
  /** The most recent ratios the scale is the median of. */
  readonly scaleWindow: number
  /** Ratios before each one whose median it is divided by for the spread (short: a drift passes in a few). */
  readonly detrendWindow: number
  /** Fewest ratios before a factor is proposed. */
  readonly minSamples: number
  /**
   * Inferences since the last re-plan before the next one: a re-plan delays the next inference (2-4
   * ms here: program build, arena mremap) and a grown plan may be one the model misjudges, so the
   * engine re-plans soon to shrink a plan that misses T, and only rarely to grow one that has room.
   */
  readonly minIntervalUp: number
  readonly minIntervalDown: number
  /**
   * Re-plan when the factor rises above now * up (barely: above `now` the plan in force misses 1.05 T
   * at p95) or falls below now * down (well below: growing is optional and a re-plan costs).
   */
  readonly up: number
  readonly down: number
  /** A re-plan upward aims at factor * margin, so that drift does not need a re-plan every few calls. */
  readonly margin: number
  /**
   * A grown plan is on trial for this many inferences: `trialMisses` of them past 1.05 T and the engine
   * returns to the plan it left (its layout is cached, so this costs about a millisecond). A small
   * plan's low ratio does not always carry over to a larger one (part of the model's error is fixed
   * costs), and before trials every such grow cost 4-5 misses until the spread caught up.
   */
  readonly trialCalls: number
  readonly trialMisses: number
  /**
   * After a failed trial, the controller grows beyond the plan it returned to for none of this many
   * inferences, doubling with each failure up to ceilingMaxCalls (the machine may speed up again).
   */
  readonly ceilingCalls: number
  readonly ceilingMaxCalls: number
}

export const onlineCalibration: OnlineCalibration = { spreadWindow: 48, scaleWindow: 16, detrendWindow: 5, minSamples: 6, minIntervalUp: 4, minIntervalDown: 32, up: 1.02, down: 0.8, margin: 1.05, trialCalls: 16, trialMisses: 2, ceilingCalls: 256, ceilingMaxCalls: 4096 }

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

/** scale x spread of the ratios (oldest first), at least 1; undefined with fewer than minSamples. */
export function latencyFactor(ratios: readonly number[], c: OnlineCalibration = onlineCalibration): number | undefined {
  if (ratios.length < c.minSamples) return undefined
  const medianOf = (end: number, n: number): number => median(ratios.slice(Math.max(0, end - n), end))
  const first = Math.max(0, ratios.length - c.spreadWindow)
  const relative: number[] = []
  for (let i = first; i < ratios.length; i++) relative.push(ratios[i]! / medianOf(i + 1, c.detrendWindow))
  relative.sort((a, b) => a - b)
  const spread = Math.max(1, quantile(relative, 0.95))
  return Math.max(1, medianOf(ratios.length, c.scaleWindow) * spread)
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  return n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2
}

/**
 * The factor to re-plan with, or undefined to keep the plan: when the factor rose above now * up
 * (at least minIntervalUp inferences since the last re-plan; then factor * margin) or fell below
 * now * down (at least minIntervalDown).
 */
export function replanFactor(ratios: readonly number[], now: number, sinceReplan: number, c: OnlineCalibration = onlineCalibration): number | undefined {
  if (sinceReplan < Math.min(c.minIntervalUp, c.minIntervalDown)) return undefined // nothing to compute per call
  const next = latencyFactor(ratios, c)
  if (next === undefined) return undefined
  if (next > now * c.up && sinceReplan >= c.minIntervalUp) return next * c.margin
  if (next < now * c.down && sinceReplan >= c.minIntervalDown) return next
  return undefined
}

/**
 * Open-time calibration: the factor to re-plan with after a few inferences of the plan just applied
 * (their measured / modelled ratios), or undefined to keep it. The median ratio is the scale of the
 * device now (a device profile may be hours old: this VM's speed drifts by 1.5x); the jitter stays the
 * profile's p95 / median, as few runs cannot measure a spread. Same band as the online re-plans, and
 * the median must also differ from the model (ratio 1) by more than twice its own standard error
 * (from the ratios' median absolute deviation): on this VM the ratios of eight consecutive runs spread
 * over 0.8-1.5, and without that test the opened plan was a coin flip between neighbours (bench:elastic's
 * accuracy cells then compared coin flips). A drift of the device is still seen at once.
 */
export function openFactor(ratios: readonly number[], now: number, jitter: number, c: OnlineCalibration = onlineCalibration): number | undefined {
  if (ratios.length === 0) return undefined
  const m = median(ratios)
  const se = medianStandardError(ratios, m)
  const next = Math.max(1, m * Math.max(1, jitter))
  if (next > now * c.up && m - 1 > 2 * se) return next * c.margin
  if (next < now * c.down && 1 - m > 2 * se) return next
  return undefined
}

/**
 * The standard error of the median of `xs` (median m): 1.2533 sigma / sqrt(n), sigma estimated as
 * 1.4826 x the median absolute deviation (both the normal distribution's constants). Zero for fewer
 * than three samples, which then count as exact (as before this test existed).
 */
export function medianStandardError(xs: readonly number[], m: number): number {
  if (xs.length < 3) return 0
  const mad = median(xs.map((x) => Math.abs(x - m)))
  return (1.2533 * 1.4826 * mad) / Math.sqrt(xs.length)
}
