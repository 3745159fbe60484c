// SPDX-License-Identifier: Apache-2.0
// memoryBudget: 'auto': the budget a memory limit leaves the engine, and when to re-plan for it. Pure:
// the readings (lib/runtime/memory-limit.ts) and the clock are the caller's.
//
// Derivation (deriveAutoBudget):
//   with a cgroup limit   raw = limit - other - headroom,  other = used - own,
//                         used = the limiting cgroup's working set (the process's RSS if unreadable),
//                         headroom = max(16 MiB, limit / 16)
//   without one           raw = availableFraction x (MemAvailable + own)
//   budget = clamp(min(raw, full) x (1 - pressureStep)^pressureSteps, minimum, full)
// `own` is what the engine counts as its own (its arena and reserve, which the budget covers), so a
// budget does not chase itself: the engine growing by d grows `used` (or shrinks MemAvailable) by d and
// `own` by d, and raw stays put. `used` is what the limit charges, the cgroup's usage, not the process's
// RSS: RSS also counts file pages charged to other cgroups (Node's binary and libraries, mapped from a
// page cache filled by whoever read them first; RssFile was 45 MB of a child's 122 MB RSS in a fresh v1
// cgroup here). Below the minimum the engine keeps its minimum plan and says so (`infeasible`): the
// caller asked to follow the machine, not to fail when it is small.
//
// Hysteresis (nextAutoBudget): re-plan only when the derived budget moves by more than
// band = max(4 MiB, 5 % of the budget in force), or reaches an end of [minimum, full]. A shrink is
// applied at once (staying above a limit invites the OOM killer); a growth at most once per
// growIntervalMs after the last change, so a limit or pressure that flaps does not re-plan each time.
// The band is always smaller than the headroom (4 MiB < 16 MiB; 5 % of a budget below the limit <
// limit / 16), so a budget kept inside the band still leaves the limit room.
// Pressure (PSI `some avg10`, % of time some task stalled on memory): at or above pressureEnter the
// budget shrinks by pressureStep, one more step per pressureStepMs while it stays high; once it is at
// or below pressureExit for pressureCalmMs, one step is given back (and again after each further
// pressureCalmMs). Between the two levels nothing changes.

export interface AutoBudgetConstants {
  readonly headroomMinBytes: number
  readonly headroomFraction: number
  readonly bandMinBytes: number
  readonly bandFraction: number
  readonly growIntervalMs: number
  /** The share of MemAvailable (plus the engine's own) taken when no cgroup limits the process. */
  readonly availableFraction: number
  readonly pressureEnter: number
  readonly pressureExit: number
  readonly pressureStep: number
  readonly pressureStepMs: number
  readonly pressureCalmMs: number
  readonly pressureMaxSteps: number
}

export const autoBudgetConstants: AutoBudgetConstants = {
  headroomMinBytes: 16 << 20,
  headroomFraction: 1 / 16,
  bandMinBytes: 4 << 20,
  bandFraction: 0.05,
  growIntervalMs: 2000,
  availableFraction: 0.5,
  pressureEnter: 10,
  pressureExit: 2,
  pressureStep: 0.1,
  pressureStepMs: 5000,
  pressureCalmMs: 30_000,
  pressureMaxSteps: 8,
}

/** What the machine says, as read (lib/runtime/memory-limit.ts). */
export interface MemoryReading {
  /** The tightest cgroup limit on the process, bytes (absent: none below the machine's memory). */
  readonly limitBytes?: number
  /** The working set of the cgroup that limit belongs to (usage less inactive file pages); the RSS stands in without it. */
  readonly usedBytes?: number
  /** MemAvailable, when no cgroup limit applies. */
  readonly availableBytes?: number
  /** PSI `some avg10` of memory, %. */
  readonly pressure?: number
}

/** The engine's side: its own figures and the ends of its budget range. */
export interface EngineFigures {
  /** The process's resident memory: `used` when the cgroup's usage cannot be read. */
  readonly rssBytes: number
  /** What the engine's budget covers now (arena + reserve), which `used` includes. */
  readonly ownBytes: number
  readonly minimumBudget: number
  /** The budget of the full model (every weight resident). */
  readonly fullBudget: number
}

export interface DerivedBudget {
  readonly budget: number
  /** The limit leaves less than the minimum: the budget is the minimum. */
  readonly infeasible: boolean
  /** Memory outside the engine's budget that the limit must also hold (0 without a limit). */
  readonly otherBytes: number
  readonly headroomBytes: number
}

export function headroomBytes(limit: number, c: AutoBudgetConstants = autoBudgetConstants): number {
  return Math.max(c.headroomMinBytes, Math.floor(limit * c.headroomFraction))
}

/** The budget the reading leaves the engine, under `pressureSteps` steps of pressure (see the top of the file). */
export function deriveAutoBudget(r: MemoryReading, e: EngineFigures, pressureSteps: number, c: AutoBudgetConstants = autoBudgetConstants): DerivedBudget {
  let raw = e.fullBudget
  let otherBytes = 0
  let headroom = 0
  if (r.limitBytes !== undefined) {
    otherBytes = Math.max(0, (r.usedBytes ?? e.rssBytes) - e.ownBytes)
    headroom = headroomBytes(r.limitBytes, c)
    raw = r.limitBytes - otherBytes - headroom
  } else if (r.availableBytes !== undefined) {
    raw = c.availableFraction * (r.availableBytes + e.ownBytes)
  }
  const pressed = Math.min(raw, e.fullBudget) * (1 - c.pressureStep) ** pressureSteps
  const budget = Math.floor(Math.min(e.fullBudget, Math.max(e.minimumBudget, pressed)))
  return { budget, infeasible: pressed < e.minimumBudget, otherBytes, headroomBytes: headroom }
}

/** What the policy remembers between readings. */
export interface AutoState {
  /** The budget in force. */
  readonly budget: number
  /** When it last changed (ms, the caller's clock). */
  readonly changedAt: number
  readonly pressureSteps: number
  /** When the last pressure step was taken. */
  readonly steppedAt?: number
  /** Since when pressure has been at or below pressureExit (while steps are held). */
  readonly calmSince?: number
}

/** The pressure steps after a reading at `now` (undefined pressure: no PSI, no change). */
export function nextPressure(s: AutoState, pressure: number | undefined, now: number, c: AutoBudgetConstants = autoBudgetConstants): AutoState {
  if (pressure === undefined) return s
  const { budget, changedAt, pressureSteps: steps, steppedAt } = s
  const held = { budget, changedAt, pressureSteps: steps, ...(steppedAt === undefined ? {} : { steppedAt }) }
  if (pressure >= c.pressureEnter) {
    const due = steps === 0 || steppedAt === undefined || now - steppedAt >= c.pressureStepMs
    return due && steps < c.pressureMaxSteps ? { ...held, pressureSteps: steps + 1, steppedAt: now } : held
  }
  // Between the levels, or nothing to give back: the calm period (re)starts with the next low reading.
  if (pressure > c.pressureExit || steps === 0) return held
  const calmSince = s.calmSince ?? now
  if (now - calmSince < c.pressureCalmMs) return { ...held, calmSince }
  return { ...held, pressureSteps: steps - 1, ...(steps > 1 ? { calmSince: now } : {}) }
}

export type AutoReason = 'limit' | 'pressure' | 'calm'

export interface AutoDecision {
  readonly state: AutoState
  readonly derived: DerivedBudget
  /** Set when the engine should re-plan for `state.budget`, and why. */
  readonly replan?: AutoReason
}

/** The band a derived budget must leave before the budget in force follows it. */
export function bandBytes(budget: number, c: AutoBudgetConstants = autoBudgetConstants): number {
  return Math.max(c.bandMinBytes, Math.floor(budget * c.bandFraction))
}

/** One reading at `now`: the new state, and whether to re-plan (see the top of the file). */
export function nextAutoBudget(s: AutoState, r: MemoryReading, e: EngineFigures, now: number, c: AutoBudgetConstants = autoBudgetConstants): AutoDecision {
  const p = nextPressure(s, r.pressure, now, c)
  const derived = deriveAutoBudget(r, e, p.pressureSteps, c)
  const d = derived.budget
  const moved = Math.abs(d - s.budget) > bandBytes(s.budget, c) || ((d === e.minimumBudget || d === e.fullBudget) && d !== s.budget)
  const grow = d > s.budget && now - s.changedAt >= c.growIntervalMs
  if (!moved || (d > s.budget && !grow)) return { state: p, derived }
  const why: AutoReason = p.pressureSteps > s.pressureSteps ? 'pressure' : p.pressureSteps < s.pressureSteps ? 'calm' : 'limit'
  return { state: { ...p, budget: d, changedAt: now }, derived, replan: why }
}
