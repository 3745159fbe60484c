// SPDX-License-Identifier: Apache-2.0
// The elastic engine's latency controller: after each inference, its measured / modelled time joins a
// window (online-calibration.ts); when the factor it gives leaves the hysteresis band, the controller
// re-plans at the new factor and says which plan to switch to. A grown plan runs on trial: if it misses
// 1.05 T `trialMisses` times within `trialCalls` inferences the controller goes back to the plan it
// left, drops the trial's ratios, and grows no further than that plan for a while (`ceilingCalls`
// inferences, doubling with each failure). Pure: planning is the caller's callback, and
// applying a plan is the caller's too.
import { onlineCalibration, openFactor, replanFactor, type OnlineCalibration } from './online-calibration.js'

/** What the controller reads of a plan. */
export interface ControlledPlan {
  readonly modelledMs: number
}

/**
 * Plans at `factor` (the planner aims at T * 1.05 / factor), with the modelled time below `belowMs` (a
 * ceiling from a failed trial); throws when nothing fits.
 */
export type PlanAt<P> = (factor: number, belowMs: number) => P

/** After an inference: keep the plan, adopt an equal one (same shards, new figures), or switch. */
export type Decision<P> = { readonly kind: 'keep' } | { readonly kind: 'adopt'; readonly plan: P } | { readonly kind: 'switch'; readonly plan: P }

export class LatencyController<P extends ControlledPlan> {
  private factorNow: number | undefined
  private readonly ratios: number[] = []
  private sinceReplan = 0
  private risk = false
  /** A grown plan on trial: the plan and factor it replaced, inferences run and missed so far. */
  private trial: { previous: P; previousFactor: number | undefined; calls: number; misses: number } | undefined
  /** Online grows stay at or below this modelled time (the plan a failed trial returned to) for ceilingLeft inferences. */
  private ceilingMs = Infinity
  private ceilingLeft = 0
  private ceilingBackoff: number

  /** `jitter`: the device profile's p95 / median, the factor until a measured one replaces it. */
  constructor(
    private readonly jitter: number,
    private readonly same: (a: P, b: P) => boolean,
    private readonly c: OnlineCalibration = onlineCalibration,
  ) {
    this.ceilingBackoff = c.ceilingCalls
  }

  /** The factor the plans aim with. */
  get factor(): number {
    return this.factorNow ?? Math.max(1, this.jitter)
  }

  /** The measured latencies say T cannot be met even by the smallest plan: the plan in force stays. */
  get atRisk(): boolean {
    return this.risk
  }

  /** Forgets trials and ceilings (the caller set a new target or preload size). */
  reset(): void {
    this.trial = undefined
    this.ceilingMs = Infinity
    this.ceilingLeft = 0
    this.ceilingBackoff = this.c.ceilingCalls
  }

  /** After an inference of `current` that took `totalMs` against target `targetMs`. */
  observe(totalMs: number, current: P, targetMs: number, planAt: PlanAt<P>): Decision<P> {
    const c = this.c
    if (this.ceilingLeft > 0 && --this.ceilingLeft === 0) this.ceilingMs = Infinity
    this.push([totalMs / current.modelledMs])
    this.sinceReplan++
    const trial = this.trial
    if (trial !== undefined) {
      trial.calls++
      if (totalMs > 1.05 * targetMs) trial.misses++
      if (trial.misses >= c.trialMisses) {
        this.trial = undefined
        // No grow at all for a while: a grow between the two plans was as likely to fail (here the
        // next grows failed every ~34 inferences, two misses each, 4-5% of the inferences).
        this.ceilingMs = Math.min(this.ceilingMs, trial.previous.modelledMs * (1 + 1e-6))
        this.ceilingLeft = this.ceilingBackoff
        this.ceilingBackoff = Math.min(2 * this.ceilingBackoff, c.ceilingMaxCalls)
        this.ratios.splice(Math.max(0, this.ratios.length - trial.calls))
        this.factorNow = trial.previousFactor
        this.sinceReplan = 0
        return { kind: 'switch', plan: trial.previous }
      }
      if (trial.calls >= c.trialCalls) this.trial = undefined
    }
    const now = this.factor
    const next = replanFactor(this.ratios, now, this.sinceReplan, c)
    if (next === undefined) return { kind: 'keep' }
    const previousFactor = this.factorNow
    this.factorNow = next
    this.sinceReplan = 0
    let plan: P
    try {
      plan = planAt(next, next < now ? this.ceilingMs : Infinity)
      this.risk = false
    } catch {
      // Growing: nothing fits under the ceiling, the plan in force stays. Shrinking: T cannot be met at
      // the measured ratio; keep the plan in force and say so (atRisk).
      if (next >= now) this.risk = true
      return { kind: 'keep' }
    }
    if (this.same(plan, current)) return { kind: 'adopt', plan }
    this.trial = plan.modelledMs > current.modelledMs ? { previous: current, previousFactor, calls: 0, misses: 0 } : undefined
    return { kind: 'switch', plan }
  }

  /**
   * One round of open-time calibration: the ratios of a few inferences of `current` join the window;
   * when their median puts the plan outside the band, the re-planned plan (or `keep`; `atRisk` when T
   * cannot be met at the measured ratio).
   */
  calibrate(ratios: readonly number[], current: P, planAt: PlanAt<P>): Decision<P> {
    this.push(ratios)
    const next = openFactor(ratios, this.factor, this.jitter, this.c)
    if (next === undefined) return { kind: 'keep' }
    this.factorNow = next
    let plan: P
    try {
      plan = planAt(next, Infinity)
      this.risk = false
    } catch {
      this.risk = true
      return { kind: 'keep' }
    }
    return this.same(plan, current) ? { kind: 'adopt', plan } : { kind: 'switch', plan }
  }

  /** The factors the controller is likeliest to move to next: the one in force x 1.1^k, k = -3..3 (at least 1). */
  neighbours(): number[] {
    return [-3, -2, -1, 0, 1, 2, 3].map((k) => Math.max(1, this.factor * 1.1 ** k))
  }

  private push(ratios: readonly number[]): void {
    this.ratios.push(...ratios)
    this.ratios.splice(0, Math.max(0, this.ratios.length - this.c.spreadWindow))
  }
}
