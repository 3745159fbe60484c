// SPDX-License-Identifier: Apache-2.0
// choosePins (lib/plan/budget/choose-pins.ts): the pinned set of a budget plan, chosen among pin
// prefixes and suffixes by the pipeline simulation. A CNN-shaped problem whose late
// weights are the heaviest and whose late steps compute least is best served by pinning late steps; on
// random problems the choice is valid and never slower than the best of the prefix grid it also searches.
import t from 'tap'
import { simulateGate } from '../../lib/plan/budget/pipeline-sim.js'
import { minimumArenaBytes, pinPrefixPlanner, type PreloadPlan, type PreloadProblem } from '../../lib/plan/memory/preload-plan.js'
import { choosePins, type PinScore } from '../../lib/plan/budget/choose-pins.js'
import { cnnProblem, prng, randomProblem, staticViolations } from '../helpers/plan-problems.js'

/** The pipeline's makespan under `plan`: op s takes opMs[s], a load bytes / bytesPerMs. */
function scorer(p: PreloadProblem, opMs: readonly number[], bytesPerMs: number): (plan: PreloadPlan) => PinScore {
  return (plan) => {
    const loads = plan.order.weight.filter((w) => !plan.placements[w]!.pinned)
    const s = { ops: p.steps, loads: loads.map((w) => ({ step: p.tensors[w]!.first, after: plan.loadAfter[w]! })) }
    const r = simulateGate(s, opMs, loads.map((w) => p.tensors[w]!.bytes / bytesPerMs))
    return { ms: r.makespanMs, reads: r.readMs }
  }
}

const pinnedSteps = (p: PreloadProblem, plan: PreloadPlan): number[] =>
  p.tensors.flatMap((x, i) => (x.kind === 'weight' && plan.placements[i]!.pinned ? [x.first] : [])).sort((a, b) => a - b)

t.test('a CNN whose last layers hold the most bytes per FLOP pins late steps, faster than any prefix', async (t) => {
  const steps = 40
  const p = cnnProblem(steps, 3)
  // Compute follows the activation size (it shrinks with depth); reads at 250 bytes per microsecond.
  const opMs = Array.from({ length: steps }, (_, s) => 3 * (1 - 0.85 * (s / steps)))
  const score = scorer(p, opMs, 250_000)
  const weights = p.tensors.filter((x) => x.kind === 'weight').reduce((n, x) => n + Math.ceil(x.bytes / 4096) * 4096, 0)
  const budget = minimumArenaBytes(p) + Math.floor(weights / 3)
  const planner = pinPrefixPlanner(p, { budget })
  const chosen = choosePins(planner, score)
  const bestOf = (plans: Array<PreloadPlan | undefined>): number => Math.min(...plans.map((plan) => (plan === undefined ? Infinity : score(plan).ms)))
  const bestPrefix = bestOf(Array.from({ length: steps + 1 }, (_, k) => planner.withPrefix(k)))
  const bestSuffix = bestOf(Array.from({ length: steps + 1 }, (_, n) => planner.withSteps(Array.from({ length: n }, (_, i) => steps - n + i))))
  const pinned = pinnedSteps(p, chosen)
  t.ok(pinned.filter((s) => s >= steps / 2).length > pinned.length / 2, `pins mostly late steps: ${pinned.join(', ')}`)
  t.ok(score(chosen).ms < bestPrefix * 0.9, `simulated ${score(chosen).ms.toFixed(1)} ms against ${bestPrefix.toFixed(1)} for the best of all ${steps + 1} prefixes`)
  t.ok(score(chosen).ms <= bestSuffix * 1.01, `and against ${bestSuffix.toFixed(1)} for the best of all suffixes`)
  t.same(staticViolations(p, chosen, budget), [])
})

t.test('random problems: the choice is a valid plan, never slower than the best of the prefix grid (within the 1% tie rule)', async (t) => {
  const problems: string[] = []
  let chosenOther = 0
  for (let seed = 1; seed <= 150; seed++) {
    const p = randomProblem(seed)
    const rand = prng(seed * 17)
    const opMs = Array.from({ length: p.steps }, () => rand() * 4)
    const score = scorer(p, opMs, 50_000 + rand() * 400_000)
    const budget = Math.ceil(minimumArenaBytes(p) * (1 + rand()))
    const planner = pinPrefixPlanner(p, { budget })
    const chosen = choosePins(planner, score)
    const bad = staticViolations(p, chosen, budget)
    if (bad.length > 0) problems.push(`seed ${seed}: ${bad[0]}`)
    let grid = Infinity
    for (let i = 0; i <= 8; i++) {
      const plan = planner.withPrefix(Math.round((i * p.steps) / 8))
      if (plan !== undefined) grid = Math.min(grid, score(plan).ms)
    }
    if (score(chosen).ms > grid * 1.01 + 1e-9) problems.push(`seed ${seed}: ${score(chosen).ms} ms against the prefix grid's ${grid}`)
    const pinned = pinnedSteps(p, chosen)
    if (pinned.length > 0 && pinned[0]! > 0) chosenOther++
  }
  t.same(problems.slice(0, 5), [])
  t.comment(`${chosenOther} of 150 chose a set other than a prefix`)
})
