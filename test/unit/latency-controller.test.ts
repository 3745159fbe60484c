// SPDX-License-Identifier: Apache-2.0
// The elastic engine's latency controller (lib/plan/elastic/latency-controller.ts) on a model planner:
// plans come in whole milliseconds, the largest that fits T * 1.05 / factor (and a ceiling), and the
// measured times are fed in, so every decision is deterministic.
import t from 'tap'
import { LatencyController, type Decision } from '../../lib/plan/elastic/latency-controller.js'
import { onlineCalibration as c } from '../../lib/plan/elastic/online-calibration.js'

interface Plan {
  readonly modelledMs: number
}
const T = 20
/** The largest whole-ms plan under T * 1.05 / factor and strictly under `below`; none under 1 ms. */
const planAt = (factor: number, below: number): Plan => {
  const ms = Math.min(Math.floor((T * 1.05) / factor), Math.ceil(below) - 1)
  if (ms < 1) throw new Error('infeasible')
  return { modelledMs: ms }
}
const same = (a: Plan, b: Plan): boolean => a.modelledMs === b.modelledMs

/** Feeds `n` inferences at `ratio` x modelled time of the plan in force; returns the plan then in force. */
function run(ctl: LatencyController<Plan>, plan: Plan, n: number, ms: (p: Plan) => number, decisions: Array<Decision<Plan>> = []): Plan {
  let p = plan
  for (let i = 0; i < n; i++) {
    const d = ctl.observe(ms(p), p, T, planAt)
    decisions.push(d)
    if (d.kind !== 'keep') p = d.plan
  }
  return p
}

t.test('inferences faster than modelled grow the plan, not before minIntervalDown of them', async (t) => {
  const ctl = new LatencyController<Plan>(1.5, same)
  const start = planAt(ctl.factor, Infinity)
  const decisions: Array<Decision<Plan>> = []
  const grown = run(ctl, start, c.minIntervalDown, (p) => 0.5 * p.modelledMs, decisions)
  t.equal(decisions.slice(0, c.minIntervalDown - 1).every((d) => d.kind === 'keep'), true, `no re-plan in the first ${c.minIntervalDown - 1} inferences`)
  t.ok(grown.modelledMs > start.modelledMs, `grown from ${start.modelledMs} to ${grown.modelledMs} ms`)
  t.ok(ctl.factor < 1.5, `factor ${ctl.factor} below the profile's jitter`)
})

t.test('a grown plan that misses 1.05 T twice in its trial is left for the plan before, and a ceiling holds', async (t) => {
  const ctl = new LatencyController<Plan>(1.5, same)
  const start = planAt(ctl.factor, Infinity)
  const grown = run(ctl, start, c.minIntervalDown, (p) => 0.5 * p.modelledMs)
  t.ok(grown.modelledMs > start.modelledMs)
  t.equal(ctl.observe(2 * T, grown, T, planAt).kind, 'keep', 'one miss: still on trial')
  const back = ctl.observe(2 * T, grown, T, planAt)
  t.same(back, { kind: 'switch', plan: start }, 'the second miss returns to the plan it replaced')
  t.equal(ctl.factor, 1.5, 'with the factor that plan was made with')
  const later = run(ctl, start, 4 * c.minIntervalDown, (p) => 0.5 * p.modelledMs)
  t.ok(later.modelledMs < grown.modelledMs, `later grows stay below the failed plan (${later.modelledMs} < ${grown.modelledMs} ms)`)
  t.equal(later.modelledMs, start.modelledMs, 'and at the plan it returned to: no grow in between either')
})

t.test('reset() forgets the ceiling of a failed trial', async (t) => {
  for (const reset of [false, true]) {
    const ctl = new LatencyController<Plan>(1.5, same)
    const start = planAt(ctl.factor, Infinity)
    const grown = run(ctl, start, c.minIntervalDown, (p) => 0.5 * p.modelledMs)
    ctl.observe(2 * T, grown, T, planAt)
    ctl.observe(2 * T, grown, T, planAt) // the trial fails: a ceiling at grown's time
    if (reset) ctl.reset()
    // A slow spell shrinks the plan, then a fast one grows it again: how far may it grow?
    const belows: number[] = []
    const spy = (f: number, below: number): Plan => {
      belows.push(below)
      return planAt(f, below)
    }
    let p = start
    for (const [n, ratio] of [[c.minSamples + c.minIntervalUp, 3], [2 * c.spreadWindow, 0.5]] as const) {
      for (let i = 0; i < n; i++) {
        const d = ctl.observe(ratio * p.modelledMs, p, T, spy)
        if (d.kind !== 'keep') p = d.plan
      }
    }
    const capped = belows.filter((b) => b !== Infinity)
    if (reset) t.same(capped, [], `after reset() no re-plan is capped (${belows.length} re-plans)`)
    else t.ok(capped.length > 0 && capped.every((b) => Math.abs(b - start.modelledMs) < 1e-4), `without reset() the grows are capped at the plan the failed trial returned to, ${start.modelledMs} ms (${capped.join(', ')})`)
  }
})

t.test('inferences slower than modelled shrink the plan within minIntervalUp; when nothing fits, the target is at risk', async (t) => {
  const ctl = new LatencyController<Plan>(1, same)
  const start = planAt(ctl.factor, Infinity)
  const decisions: Array<Decision<Plan>> = []
  const shrunk = run(ctl, start, c.minSamples + c.minIntervalUp, (p) => 1.5 * p.modelledMs, decisions)
  t.ok(shrunk.modelledMs < start.modelledMs, `shrunk from ${start.modelledMs} to ${shrunk.modelledMs} ms`)
  t.notOk(ctl.atRisk)
  run(ctl, shrunk, 200, () => 40 * T)
  t.ok(ctl.atRisk, 'times no plan can meet: at risk, the plan in force kept')
})

t.test('a re-plan to the plan in force is adopted, not switched to', async (t) => {
  // Plans of 10 or 20 ms only: a factor that moves from 1.5 to 1.1 still gives the 10 ms plan.
  const coarse = (f: number): Plan => ({ modelledMs: (T * 1.05) / f >= 20 ? 20 : 10 })
  const ctl = new LatencyController<Plan>(1.5, same)
  const start = coarse(ctl.factor)
  const decisions: Array<Decision<Plan>> = []
  let p = start
  for (let i = 0; i < c.minIntervalDown; i++) {
    const d = ctl.observe(1.1 * p.modelledMs, p, T, coarse)
    decisions.push(d)
    if (d.kind !== 'keep') p = d.plan
  }
  t.ok(decisions.some((d) => d.kind === 'adopt'), `adopted an equal plan (factor now ${ctl.factor.toFixed(3)})`)
  t.notOk(decisions.some((d) => d.kind === 'switch'), 'and never switched')
})

t.test('open-time calibration: a slow device shrinks the plan at once; a measured band keeps it', async (t) => {
  const ctl = new LatencyController<Plan>(1, same)
  const start = planAt(ctl.factor, Infinity)
  const d = ctl.calibrate([2, 2, 2, 2], start, planAt)
  t.equal(d.kind, 'switch')
  t.ok(d.kind === 'switch' && d.plan.modelledMs < start.modelledMs, 'a smaller plan')
  const steady = new LatencyController<Plan>(1, same)
  t.same(steady.calibrate([1, 1, 1, 1], start, planAt), { kind: 'keep' }, 'ratios within the band: no re-plan')
  const hopeless = new LatencyController<Plan>(1, same)
  t.same(hopeless.calibrate([100, 100], start, planAt), { kind: 'keep' }, 'nothing fits: the plan stays')
  t.ok(hopeless.atRisk, 'and the target is at risk')
})

t.test('neighbours are the factor x 1.1^-3..3, never below 1', async (t) => {
  const ctl = new LatencyController<Plan>(1.2, same)
  const n = ctl.neighbours()
  t.equal(n.length, 7)
  t.ok(n.every((f) => f >= 1), 'all >= 1')
  t.ok(Math.abs(n[3]! - 1.2) < 1e-12 && Math.abs(n[6]! - 1.2 * 1.1 ** 3) < 1e-12, 'centred on the factor in force')
})
