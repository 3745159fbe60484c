// SPDX-License-Identifier: Apache-2.0
// memoryBudget: 'auto''s policy (lib/plan/budget/auto-budget.ts), by properties over seeded random
// readings: the budget stays within [minimum, full], grows with the limit, never leaves the process above
// its limit once the engine has re-planned, and does not re-plan for moves inside the band or grow more
// often than growIntervalMs; pressure steps enter and leave at their separate levels.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import {
  autoBudgetConstants as c,
  bandBytes,
  deriveAutoBudget,
  headroomBytes,
  nextAutoBudget,
  nextPressure,
  type AutoState,
  type EngineFigures,
  type MemoryReading,
} from '../../lib/plan/budget/auto-budget.js'

const MiB = 2 ** 20
const seed = 20240611
const cases = 2000

/** Random engine figures and readings: models of 8 MiB to 2 GiB, limits from nothing to 4 GiB. */
function generator(s: number) {
  const rand = seededRandom(s)
  const between = (lo: number, hi: number): number => Math.floor(lo + rand() * (hi - lo))
  const figures = (): EngineFigures => {
    const minimumBudget = between(2 * MiB, 64 * MiB)
    const fullBudget = minimumBudget + between(0, 2048 * MiB)
    const ownBytes = between(0, fullBudget)
    return { rssBytes: ownBytes + between(30 * MiB, 300 * MiB), ownBytes, minimumBudget, fullBudget }
  }
  const reading = (e: EngineFigures): MemoryReading => {
    const kind = rand()
    const pressure = rand() < 0.3 ? rand() * 40 : undefined
    const p = pressure === undefined ? {} : { pressure }
    if (kind < 0.7) return { limitBytes: between(MiB, 4096 * MiB), ...(rand() < 0.8 ? { usedBytes: e.rssBytes + between(0, 200 * MiB) } : {}), ...p }
    if (kind < 0.9) return { availableBytes: between(0, 8192 * MiB), ...p }
    return p
  }
  return { rand, between, figures, reading }
}

t.test(`the derived budget is within [minimum, full], at any pressure (${cases} cases, seed ${seed})`, async (t) => {
  const g = generator(seed)
  let bad = 0
  /** Reports the first failing case only: the rest would repeat it. */
  const fail = (message: string): void => void (bad++ === 0 && t.fail(message))
  for (let i = 0; i < cases; i++) {
    const e = g.figures()
    const r = g.reading(e)
    const d = deriveAutoBudget(r, e, g.between(0, c.pressureMaxSteps + 1))
    if (!(d.budget >= e.minimumBudget && d.budget <= e.fullBudget && Number.isInteger(d.budget))) fail(`case ${i}: ${JSON.stringify({ e, r, d })}`)
    if (d.infeasible && d.budget !== e.minimumBudget) fail(`case ${i}: infeasible but not the minimum: ${JSON.stringify({ e, r, d })}`)
  }
  t.equal(bad, 0, 'every case')
})

t.test('the derived budget does not shrink when the limit grows, nor when pressure eases', async (t) => {
  const g = generator(seed + 1)
  let bad = 0
  /** Reports the first failing case only: the rest would repeat it. */
  const fail = (message: string): void => void (bad++ === 0 && t.fail(message))
  for (let i = 0; i < cases; i++) {
    const e = g.figures()
    const r = { ...g.reading(e), limitBytes: g.between(MiB, 4096 * MiB) }
    const more = { ...r, limitBytes: r.limitBytes + g.between(0, 512 * MiB) }
    const steps = g.between(0, c.pressureMaxSteps)
    const a = deriveAutoBudget(r, e, steps).budget
    if (deriveAutoBudget(more, e, steps).budget < a) fail(`case ${i}: limit ${r.limitBytes} -> ${more.limitBytes} shrank the budget`)
    if (deriveAutoBudget(r, e, steps + 1).budget > a) fail(`case ${i}: one more pressure step grew the budget`)
  }
  t.equal(bad, 0, 'every case')
})

t.test('with a limit: budget + other memory + headroom = limit until a clamp; own memory does not move it', async (t) => {
  const g = generator(seed + 2)
  for (let i = 0; i < 200; i++) {
    const e = { ...g.figures(), fullBudget: 8192 * MiB, minimumBudget: MiB }
    const r = { limitBytes: g.between(1024 * MiB, 4096 * MiB), usedBytes: e.rssBytes }
    const d = deriveAutoBudget(r, e, 0)
    t.equal(d.headroomBytes, headroomBytes(r.limitBytes))
    t.ok(Math.abs(d.budget + d.otherBytes + d.headroomBytes - r.limitBytes) <= 1, `case ${i}: ${d.budget} + ${d.otherBytes} + ${d.headroomBytes} = ${r.limitBytes}`)
    // The engine growing by 10 MiB grows the cgroup's usage and its own bytes alike.
    const grown = { ...e, ownBytes: e.ownBytes + 10 * MiB, rssBytes: e.rssBytes + 10 * MiB }
    t.equal(deriveAutoBudget({ ...r, usedBytes: r.usedBytes + 10 * MiB }, grown, 0).budget, d.budget, `case ${i}: a fixed point`)
    if (t.passing() === false) break
  }
  const e: EngineFigures = { rssBytes: 100 * MiB, ownBytes: 0, minimumBudget: 10 * MiB, fullBudget: 1000 * MiB }
  t.equal(deriveAutoBudget({ availableBytes: 800 * MiB }, { ...e, ownBytes: 200 * MiB }, 0).budget, 500 * MiB, 'no limit: half of MemAvailable plus what the engine holds')
  t.equal(deriveAutoBudget({}, e, 0).budget, 1000 * MiB, 'nothing readable: the full model')
  t.same(deriveAutoBudget({ limitBytes: 50 * MiB }, e, 0), { budget: 10 * MiB, infeasible: true, otherBytes: 100 * MiB, headroomBytes: 16 * MiB }, 'a limit below the minimum: the minimum, infeasible')
})

t.test('re-plans only outside the band or at an end; shrinks at once, grows at most once per growIntervalMs', async (t) => {
  const g = generator(seed + 3)
  let bad = 0
  /** Reports the first failing case only: the rest would repeat it. */
  const fail = (message: string): void => void (bad++ === 0 && t.fail(message))
  let replans = 0
  let small = 0
  for (let i = 0; i < cases; i++) {
    const e = g.figures()
    const r = g.reading(e)
    const s: AutoState = { budget: g.between(e.minimumBudget, e.fullBudget + 1), changedAt: 0, pressureSteps: g.between(0, 3) }
    const now = g.rand() < 0.5 ? g.between(0, c.growIntervalMs) : g.between(c.growIntervalMs, 10 * c.growIntervalMs)
    const d = nextAutoBudget(s, r, e, now)
    const move = d.derived.budget - s.budget
    const end = d.derived.budget === e.minimumBudget || d.derived.budget === e.fullBudget
    const outside = Math.abs(move) > bandBytes(s.budget) || (end && move !== 0)
    const want = outside && (move < 0 || now - s.changedAt >= c.growIntervalMs)
    if ((d.replan !== undefined) !== want) fail(`case ${i}: ${JSON.stringify({ s, r, e, now, d })}`)
    if (d.replan !== undefined) {
      replans++
      if (d.state.budget !== d.derived.budget || d.state.changedAt !== now) fail(`case ${i}: re-planned to ${d.state.budget}, derived ${d.derived.budget}`)
    } else {
      if (!outside && move !== 0) small++
      if (d.state.budget !== s.budget || d.state.changedAt !== s.changedAt) fail(`case ${i}: kept, yet the state changed`)
    }
  }
  t.equal(bad, 0, 'every case')
  t.ok(replans > cases / 10 && small > cases / 20, `${replans} re-plans, ${small} moves inside the band kept: both kinds were drawn`)
})

t.test('under a moving limit, the budget in force never leaves the process above it once re-planned', async (t) => {
  const g = generator(seed + 4)
  let bad = 0
  /** Reports the first failing case only: the rest would repeat it. */
  const fail = (message: string): void => void (bad++ === 0 && t.fail(message))
  for (let run = 0; run < 1000; run++) {
    const e0 = g.figures()
    let s: AutoState = { budget: e0.fullBudget, changedAt: 0, pressureSteps: 0 }
    let now = 0
    const other = g.between(30 * MiB, 300 * MiB)
    // Small limits moving by less than the headroom: where a kept budget comes closest to the limit.
    let limit = g.between(64 * MiB, 1024 * MiB)
    for (let step = 0; step < 20; step++) {
      // The engine holds its budget; the rest of the process and the cgroup hold `other`.
      const e = { ...e0, ownBytes: s.budget, rssBytes: s.budget + other }
      if (g.rand() < 0.5) limit = Math.max(MiB, limit + g.between(-48 * MiB, 32 * MiB))
      now += g.between(0, 3 * c.growIntervalMs)
      const d = nextAutoBudget(s, { limitBytes: limit, usedBytes: e.rssBytes }, e, now)
      s = d.state
      if (!d.derived.infeasible && s.budget + other > limit) fail(`run ${run} step ${step}: budget ${s.budget} + other ${other} > limit ${limit}`)
    }
  }
  t.equal(bad, 0, 'every run')
})

t.test('pressure: a step at pressureEnter, one more per pressureStepMs while high, one back per pressureCalmMs at or below pressureExit', async (t) => {
  const s0: AutoState = { budget: 100 * MiB, changedAt: 0, pressureSteps: 0 }
  const high = c.pressureEnter
  const mid = (c.pressureEnter + c.pressureExit) / 2
  const low = c.pressureExit
  let s = nextPressure(s0, high, 1000)
  t.equal(s.pressureSteps, 1, 'high: the first step at once')
  t.equal(nextPressure(s, high, 1000 + c.pressureStepMs - 1).pressureSteps, 1, 'not again before pressureStepMs')
  s = nextPressure(s, high, 1000 + c.pressureStepMs)
  t.equal(s.pressureSteps, 2, 'again after pressureStepMs')
  t.equal(nextPressure(s, mid, 1e9).pressureSteps, 2, 'between the levels: held, however long')
  t.equal(nextPressure(s0, mid, 0).pressureSteps, 0, 'between the levels from none: no step')
  let calm = nextPressure(s, low, 100_000)
  t.equal(calm.pressureSteps, 2, 'low: the calm period starts')
  t.equal(nextPressure(calm, low, 100_000 + c.pressureCalmMs - 1).pressureSteps, 2, 'not given back before pressureCalmMs')
  t.equal(nextPressure(nextPressure(calm, mid, 100_001), low, 100_000 + c.pressureCalmMs).pressureSteps, 2, 'a reading between the levels restarts the calm period')
  calm = nextPressure(calm, low, 100_000 + c.pressureCalmMs)
  t.equal(calm.pressureSteps, 1, 'one step back after pressureCalmMs')
  calm = nextPressure(calm, 0, 100_000 + 2 * c.pressureCalmMs)
  t.equal(calm.pressureSteps, 0, 'and the next after another')
  t.equal(calm.calmSince, undefined, 'none left to give back: no calm period')
  t.same(nextPressure(s, undefined, 5), s, 'no PSI: unchanged')
  let many = s0
  for (let i = 0; i < 3 * c.pressureMaxSteps; i++) many = nextPressure(many, 100, i * c.pressureStepMs)
  t.equal(many.pressureSteps, c.pressureMaxSteps, 'at most pressureMaxSteps')

  const e: EngineFigures = { rssBytes: 0, ownBytes: 0, minimumBudget: 10 * MiB, fullBudget: 100 * MiB }
  const d = nextAutoBudget(s0, { availableBytes: 1e12, pressure: high }, e, 10_000)
  t.equal(d.replan, 'pressure', 'a pressure step shrinks even a budget at the full model')
  t.equal(d.state.budget, Math.floor(100 * MiB * (1 - c.pressureStep)))
})
