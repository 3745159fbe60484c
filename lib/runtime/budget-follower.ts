// SPDX-License-Identifier: Apache-2.0
// memoryBudget: 'auto' for a BudgetedEngine: reads the machine's memory (memory-limit.ts), asks the policy
// (lib/plan/budget/auto-budget.ts) whether to re-plan, and keeps what it decided for stats() and an
// optional callback. The engine re-plans, in its queue: before each inference, and from an unref'd
// timer while it is idle, so an idle engine also gives memory back when the limit drops.
import { autoBudgetConstants, deriveAutoBudget, nextAutoBudget, type AutoBudgetConstants, type AutoReason, type AutoState, type DerivedBudget, type EngineFigures } from '../plan/budget/auto-budget.js'
import { MemoryLimitReader, type LimitSource, type MemoryLimitReading } from './memory-limit.js'

/** How often an idle engine reads the machine's memory. */
export const idleCheckMs = 1000

/** A change of the automatic budget, or of whether the limit leaves the engine its minimum. */
export interface AutoBudgetChange {
  /** The limit moved, pressure rose, or pressure stayed low long enough to give a step back. */
  readonly reason: AutoReason
  readonly from: number
  readonly to: number
  /** 'infeasible': the limit leaves less than the minimum budget; the engine runs its minimum plan. */
  readonly status: 'following' | 'infeasible'
  /** When (Date.now()). */
  readonly at: number
}

/** What memoryBudget: 'auto' read and decided (BudgetStats.auto). */
export interface AutoBudgetStats {
  /** Where the limit came from: a cgroup, MemAvailable (no cgroup limit), or nothing readable (the full model). */
  readonly source: LimitSource
  readonly limitFile?: string
  readonly limitBytes?: number
  readonly availableBytes?: number
  /** The working set of the limiting cgroup. */
  readonly usedBytes?: number
  /** Memory outside the engine's budget that the limit also holds (the process's and the cgroup's other memory). */
  readonly otherBytes: number
  readonly headroomBytes: number
  /** PSI `some avg10` of memory, %, and the file it came from. */
  readonly pressure?: number
  readonly pressureFile?: string
  /** Pressure steps the budget is shrunk by (lib/plan/budget/auto-budget.ts). */
  readonly pressureSteps: number
  /** The budget the last reading derived (the budget in force follows it outside the hysteresis band). */
  readonly derivedBudget: number
  readonly status: 'following' | 'infeasible'
  readonly lastChange?: AutoBudgetChange
  /** Files the last reading ignored, each with the reason (malformed, unreadable). */
  readonly ignored: readonly string[]
  /** The last automatic re-plan that failed (the budget before it stays). */
  readonly lastError?: string
}

export class BudgetFollower {
  private state: AutoState
  private reading: MemoryLimitReading
  private derived: DerivedBudget
  private lastChange: AutoBudgetChange | undefined
  private lastError: string | undefined
  private timer: NodeJS.Timeout | undefined
  /** A timer's check is queued and has not run yet. */
  private queued = false

  /** Reads once: `budget` is the budget to open with. */
  constructor(
    figures: EngineFigures,
    private readonly onChange: ((change: AutoBudgetChange) => void) | undefined,
    private readonly reader = new MemoryLimitReader(),
    private readonly c: AutoBudgetConstants = autoBudgetConstants,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.reading = reader.read()
    this.derived = deriveAutoBudget(this.reading, figures, 0, c)
    this.state = { budget: this.derived.budget, changedAt: clock(), pressureSteps: 0 }
  }

  get budget(): number {
    return this.state.budget
  }

  /** Reads the machine and, when the policy says so, re-plans through `replan`; a failure is kept for stats(). */
  async follow(figures: EngineFigures, replan: (bytes: number) => Promise<unknown>): Promise<void> {
    const asked = this.check(figures)
    if (asked === undefined) return
    const from = this.state.budget
    try {
      await replan(asked.next.budget)
    } catch (err) {
      // The engine went back to its plan: keep the budget, and the pressure bookkeeping of this reading.
      this.lastError = err instanceof Error ? err.message : String(err)
      this.state = { ...asked.next, budget: from }
      return
    }
    this.lastError = undefined
    this.state = asked.next
    this.changed(asked.reason, from)
  }

  /** Every idleCheckMs, `enqueue`s `check` unless the last one is still waiting; does not keep the process alive. */
  watch(enqueue: (job: () => Promise<void>) => unknown, check: () => Promise<void>): void {
    this.timer ??= setInterval(() => {
      if (this.queued) return
      this.queued = true
      enqueue(() => {
        this.queued = false
        return check()
      })
    }, idleCheckMs).unref()
  }

  /** The budget to re-plan for and why, or undefined to keep the one in force. */
  private check(figures: EngineFigures): { reason: AutoReason; next: AutoState } | undefined {
    this.reading = this.reader.read()
    const was = this.derived.infeasible
    const d = nextAutoBudget(this.state, this.reading, figures, this.clock(), this.c)
    this.derived = d.derived
    if (d.replan !== undefined) return { reason: d.replan, next: d.state }
    this.state = d.state
    if (was !== d.derived.infeasible) this.changed('limit', this.state.budget)
    return undefined
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  stats(): AutoBudgetStats {
    const r = this.reading
    const d = this.derived
    return {
      source: r.source,
      ...(r.limitFile === undefined ? {} : { limitFile: r.limitFile, limitBytes: r.limitBytes! }),
      ...(r.availableBytes === undefined ? {} : { availableBytes: r.availableBytes }),
      ...(r.usedBytes === undefined ? {} : { usedBytes: r.usedBytes }),
      otherBytes: d.otherBytes,
      headroomBytes: d.headroomBytes,
      ...(r.pressure === undefined ? {} : { pressure: r.pressure, pressureFile: r.pressureFile! }),
      pressureSteps: this.state.pressureSteps,
      derivedBudget: d.budget,
      status: d.infeasible ? 'infeasible' : 'following',
      ...(this.lastChange === undefined ? {} : { lastChange: this.lastChange }),
      ignored: r.ignored,
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
    }
  }

  private changed(reason: AutoReason, from: number): void {
    const change: AutoBudgetChange = { reason, from, to: this.state.budget, status: this.derived.infeasible ? 'infeasible' : 'following', at: Date.now() }
    this.lastChange = change
    // Outside the engine's queue: a callback that throws is the caller's uncaught error, as a listener's would be.
    const cb = this.onChange
    if (cb !== undefined) queueMicrotask(() => cb(change))
  }
}
