// SPDX-License-Identifier: Apache-2.0
// planPreload: plans never let a load or a step write over live bytes, under any queue interleaving.
import t, { type Test } from 'tap'
import {
  minimumArenaBytes,
  pinPrefixPlanner,
  planOnDemandFirstFit,
  planPreload,
  PlanInfeasibleError,
  type PreloadOptions,
  type PreloadPlan,
  type PreloadProblem,
} from '../../lib/plan/memory/preload-plan.js'
import { ArgumentError } from '../../lib/errors.js'
import { cnnProblem, orderViolations, prng, randomProblem, simulateQueues, staticViolations } from '../helpers/plan-problems.js'

const cases = 300
const interleavings = 12

/** Static invariants, order table and `interleavings` random runs of the two queues. */
function check(t: Test, p: PreloadProblem, plan: PreloadPlan, options: PreloadOptions, label: string): void {
  const problems = [...staticViolations(p, plan, options.budget, options.alignment), ...orderViolations(p, plan)]
  const rand = prng(p.tensors.length * 7919 + options.budget)
  for (let k = 0; k < interleavings && problems.length === 0; k++) {
    const v = simulateQueues(p, plan, rand)
    if (v !== undefined) problems.push(`interleaving ${k}: ${v}`)
  }
  if (problems.length > 0) t.fail(`${label}: ${problems.slice(0, 3).join('; ')}`)
}

/** Live-bytes lower bound: the busiest step with every tensor padded and occupying only [first, last]. */
function liveLowerBound(p: PreloadProblem, alignment = 64): number {
  const live = new Map<number, number>()
  for (const x of p.tensors) {
    const a = x.kind === 'weight' ? 4096 : alignment
    for (let s = x.first; s <= x.last; s++) live.set(s, (live.get(s) ?? 0) + Math.ceil(x.bytes / a) * a)
  }
  return Math.max(0, ...live.values())
}

const variants: readonly Omit<PreloadOptions, 'budget'>[] = [{}, { pin: false }, { preload: false }, { pin: false, preload: false }, { alignment: 256 }]

t.test('random plans keep live tensors apart in address and in every queue interleaving', async (t) => {
  let plans = 0
  for (let seed = 1; seed <= cases; seed++) {
    const p = randomProblem(seed)
    const variant = variants[seed % variants.length]!
    const min = minimumArenaBytes(p, variant)
    const rand = prng(seed)
    for (const budget of [min, min + 4096 * Math.floor(rand() * 64), Math.ceil(min * (1.2 + rand()))]) {
      const options = { ...variant, budget }
      check(t, p, planPreload(p, options), options, `seed ${seed} ${JSON.stringify(options)}`)
      plans++
    }
  }
  t.pass(`${plans} plans checked`)
})

t.test('minimumArenaBytes plans and 4096 bytes less does not', async (t) => {
  for (let seed = 1; seed <= cases; seed++) {
    const p = randomProblem(seed)
    const variant = variants[seed % variants.length]!
    const min = minimumArenaBytes(p, variant)
    t.equal(min % 4096, 0, `seed ${seed}: a multiple of 4096`)
    t.doesNotThrow(() => planPreload(p, { ...variant, budget: min }), `seed ${seed}: plans at ${min}`)
    const below = min - 4096
    if (below >= liveLowerBound(p, variant.alignment)) {
      t.throws(() => planPreload(p, { ...variant, budget: below }), PlanInfeasibleError, `seed ${seed}: fails at ${below}`)
    }
  }
})

t.test('with a huge budget every weight is pinned and nothing loads at inference', async (t) => {
  for (let seed = 1; seed <= 50; seed++) {
    const p = randomProblem(seed)
    const budget = 1 << 30
    const plan = planPreload(p, { budget })
    const weights = p.tensors.filter((x) => x.kind === 'weight')
    t.ok(plan.placements.every((pl, i) => pl.pinned === (p.tensors[i]!.kind === 'weight')), `seed ${seed}: exactly the weights are pinned`)
    t.equal(plan.pinnedBytes, weights.reduce((s, w) => s + Math.ceil(w.bytes / 4096) * 4096, 0), `seed ${seed}: pinnedBytes`)
    t.equal(plan.preloadedWeights, 0)
    t.ok(plan.loadAfter.every((x) => x === -1))
    t.ok(plan.arenaBytes < budget, `seed ${seed}: the arena (${plan.arenaBytes}) is capped below the budget`)
    check(t, p, plan, { budget }, `seed ${seed} huge`)
  }
})

t.test('without preload every loaded weight is allocated at its first step', async (t) => {
  for (let seed = 1; seed <= 100; seed++) {
    const p = randomProblem(seed)
    const plan = planPreload(p, { budget: minimumArenaBytes(p, { preload: false, pin: false }), preload: false, pin: false })
    const early = p.tensors.filter((x, i) => x.kind === 'weight' && plan.placements[i]!.allocStep !== x.first)
    t.equal(early.length, 0, `seed ${seed}`)
    t.equal(plan.preloadedWeights, 0)
    t.same(plan.fallbackSteps, [])
    t.ok(minimumArenaBytes(p, { pin: false }) <= minimumArenaBytes(p, { preload: false, pin: false }), `seed ${seed}: preloading never needs a larger budget`)
  }
})

t.test('a CNN-shaped problem preloads weights, pins the leading steps and plans safely at several budgets', async (t) => {
  const p = cnnProblem(60)
  const min = minimumArenaBytes(p)
  const noPreload = minimumArenaBytes(p, { preload: false, pin: false })
  t.comment(`cnn60: minimumArenaBytes ${min} (no preload, no pin: ${noPreload})`)
  for (const budget of [min, Math.ceil(min * 1.25), min * 2, min * 4]) {
    const plan = planPreload(p, { budget })
    t.comment(
      `budget ${budget}: arena ${plan.arenaBytes}, pinned ${plan.pinnedBytes} bytes, preloaded ${plan.preloadedWeights} weights, fallback steps [${plan.fallbackSteps.join(', ')}]`,
    )
    check(t, p, plan, { budget }, `cnn60 at ${budget}`)
    if (budget >= min * 2) t.ok(plan.pinnedBytes > 0, `budget ${budget}: some weights are pinned`)
    const pinnedSteps = p.tensors.flatMap((x, i) => (plan.placements[i]!.pinned ? [x.first] : []))
    t.ok(pinnedSteps.every((s) => s < pinnedSteps.length), `budget ${budget}: pinned weights are those of the leading steps`)
  }
  const unpinned = planPreload(p, { budget: Math.ceil(min * 1.5), pin: false })
  t.ok(unpinned.preloadedWeights > 0, `without pinning, ${unpinned.preloadedWeights} weights start loading before their step`)
  check(t, p, unpinned, { budget: Math.ceil(min * 1.5), pin: false }, 'cnn60 unpinned')
})

t.test('a weight whose preload would starve the next workspace is loaded after the previous step (the seed figure)', async (t) => {
  // Three layers; layer 2's workspace takes the memory layer 2's weight would need during layer 1.
  const MB = 1 << 20
  const p: PreloadProblem = {
    steps: 3,
    tensors: [
      { kind: 'activation', bytes: MB, first: -1, last: 0 },
      { kind: 'weight', bytes: MB, first: 0, last: 0 },
      { kind: 'activation', bytes: MB, first: 0, last: 1 },
      { kind: 'weight', bytes: MB, first: 1, last: 1 },
      { kind: 'intermediate', bytes: 2 * MB, first: 1, last: 1 },
      { kind: 'activation', bytes: MB, first: 1, last: 2 },
      { kind: 'weight', bytes: 2 * MB, first: 2, last: 2 },
      { kind: 'activation', bytes: MB, first: 2, last: 3 },
    ],
  }
  const budget = 5 * MB
  const plan = planPreload(p, { budget, pin: false })
  check(t, p, plan, { budget, pin: false }, 'three layers')
  t.equal(plan.placements[6]!.allocStep, 2, 'the last weight is not preloaded')
  t.equal(plan.loadAfter[6], 1, 'comp(1) < load(2)')
  t.same(plan.fallbackSteps, [1], 'step 1 was re-planned without preload to make room for its workspace')
  t.equal(plan.placements[3]!.allocStep, 1)
})

t.test('a too-small budget names the step that does not fit and the bytes it needs', async (t) => {
  const p: PreloadProblem = {
    steps: 4,
    tensors: [
      { kind: 'activation', bytes: 1000, first: -1, last: 0 },
      { kind: 'activation', bytes: 1000, first: 0, last: 1 },
      { kind: 'activation', bytes: 1000, first: 1, last: 2 },
      { kind: 'intermediate', bytes: 100_000, first: 2, last: 2, name: 'big workspace' },
      { kind: 'activation', bytes: 1000, first: 2, last: 4 },
      { kind: 'weight', bytes: 5000, first: 3, last: 3 },
    ],
  }
  const err = t.throws(() => planPreload(p, { budget: 65536 })) as PlanInfeasibleError
  t.type(err, PlanInfeasibleError)
  t.equal(err.code, 'ERR_FLEXPIPE_MEMORY_BUDGET')
  t.equal(err.step, 2)
  t.equal(err.bytesNeeded, 1024 + 100_032 + 1024)
  t.match(err.message, /step 2 does not fit \(bytesNeeded=102080, budget=65536\); raise the budget to at least 102080 bytes/)
  t.ok(planPreload(p, { budget: minimumArenaBytes(p) }))
})

t.test('invalid problems and budgets are rejected with the field that is wrong', async (t) => {
  const ok = { kind: 'activation', bytes: 10, first: 0, last: 1 } as const
  t.throws(() => planPreload({ steps: 2, tensors: [{ ...ok, kind: 'weight', first: -1 }] }, { budget: 1 << 20 }), {
    constructor: ArgumentError,
    message: 'tensors[0].first: expected integer 0..1 for a weight, got -1',
  })
  t.throws(() => planPreload({ steps: 2, tensors: [{ ...ok, last: -1 }] }, { budget: 1 << 20 }), ArgumentError)
  t.throws(() => planPreload({ steps: 2, tensors: [{ ...ok, bytes: 1.5 }] }, { budget: 1 << 20 }), ArgumentError)
  t.throws(() => planPreload({ steps: 2, tensors: [ok] }, { budget: -1 }), ArgumentError)
  t.throws(() => planPreload({ steps: 2, tensors: [ok] }, { budget: 1 << 20, alignment: 48 }), ArgumentError)
})

t.test('the on-demand first-fit allocator never overlaps live tensors', async (t) => {
  let atLeast = 0
  const ratios: number[] = []
  for (let seed = 1; seed <= cases; seed++) {
    const p = randomProblem(seed)
    const plan = planOnDemandFirstFit(p)
    const options = { budget: plan.arenaBytes, pin: false, preload: false }
    check(t, p, plan, options, `seed ${seed} on demand`)
    const min = minimumArenaBytes(p, { pin: false })
    if (plan.arenaBytes >= min) atLeast++
    if (min > 0) ratios.push(plan.arenaBytes / min)
  }
  ratios.sort((a, b) => a - b)
  t.comment(
    `on-demand first-fit arena >= static minimumArenaBytes in ${atLeast}/${cases} random cases; arena/minimum median ${ratios[ratios.length >> 1]!.toFixed(3)}, min ${ratios[0]!.toFixed(3)}, max ${ratios[ratios.length - 1]!.toFixed(3)}`,
  )
  const cnn = cnnProblem(60)
  t.comment(`cnn60: on-demand first-fit arena ${planOnDemandFirstFit(cnn).arenaBytes}, static minimum ${minimumArenaBytes(cnn, { pin: false })}`)
})

t.test('plans are deterministic', async (t) => {
  const p = cnnProblem(40, 3)
  t.same(planPreload(p, { budget: 64 << 20 }), planPreload(p, { budget: 64 << 20 }))
})

t.test('planning time on a ResNet-152-sized problem (1000 steps, 3001 tensors)', async (t) => {
  const p = cnnProblem(1000, 7)
  const time = <T>(f: () => T): [T, number] => {
    const t0 = performance.now()
    const r = f()
    return [r, performance.now() - t0]
  }
  const [min, minMs] = time(() => minimumArenaBytes(p))
  t.comment(`minimumArenaBytes ${min} bytes in ${minMs.toFixed(0)} ms`)
  for (const budget of [min, Math.ceil(min * 1.1), Math.ceil(min * 1.5), min * 2, min * 4, min * 16, 1 << 30]) {
    const runs = Array.from({ length: 5 }, () => time(() => planPreload(p, { budget })))
    const [plan] = runs[0]!
    const ms = runs.map(([, ms]) => ms).sort((a, b) => a - b)
    t.comment(
      `budget ${budget}: planned in ${ms[2]!.toFixed(1)} ms median, ${ms[4]!.toFixed(1)} ms max (pinned ${plan.pinnedBytes}, preloaded ${plan.preloadedWeights}, fallback steps ${plan.fallbackSteps.length})`,
    )
    const problems = staticViolations(p, plan, budget)
    t.same(problems.slice(0, 3), [], `budget ${budget}: the plan is valid`)
  }
  const [, noPinMs] = time(() => planPreload(p, { budget: Math.ceil(min * 1.5), pin: false }))
  t.comment(`without pinning: ${noPinMs.toFixed(1)} ms`)
})

t.test('a cap on the pinned prefix never makes a budget that plans infeasible (it is lifted when nothing plans within it)', async (t) => {
  for (let seed = 1; seed <= 120; seed++) {
    const p = randomProblem(seed)
    const min = minimumArenaBytes(p)
    for (const maxPinSteps of [0, 1, 2]) {
      const options = { budget: min, maxPinSteps }
      check(t, p, planPreload(p, options), options, `seed ${seed} ${JSON.stringify(options)}`)
    }
  }
})

t.test('pinned step sets (suffixes, random sets): exactly those steps\' weights stay resident, and the plan is safe in every interleaving', async (t) => {
  let planned = 0
  let refused = 0
  for (let seed = 1; seed <= 150; seed++) {
    const p = randomProblem(seed)
    const min = minimumArenaBytes(p)
    const rand = prng(seed * 13)
    const padded = (x: { bytes: number }): number => Math.ceil(x.bytes / 4096) * 4096
    const weightBytes = p.tensors.filter((x) => x.kind === 'weight').reduce((n, x) => n + padded(x), 0)
    for (const budget of [min, Math.ceil(min + rand() * weightBytes)]) {
      const planner = pinPrefixPlanner(p, { budget })
      const S = p.steps
      const suffix = (n: number): number[] => Array.from({ length: n }, (_, i) => S - n + i)
      const randomSet = Array.from({ length: S }, (_, i) => i).filter(() => rand() < 0.3)
      for (const steps of [suffix(1), suffix(Math.floor(S / 2)), suffix(S), randomSet]) {
        const chosen = new Set(steps)
        const expected = p.tensors.reduce((n, x) => n + (x.kind === 'weight' && chosen.has(x.first) ? padded(x) : 0), 0)
        const listed = steps.reduce((n, s) => n + planner.stepBytes[s]!, 0)
        if (listed !== expected) t.fail(`seed ${seed}: stepBytes over ${steps.length} steps ${listed} vs ${expected}`)
        const plan = planner.withSteps(steps)
        if (plan === undefined) {
          refused++
          continue
        }
        planned++
        check(t, p, plan, { budget }, `seed ${seed} budget ${budget} steps ${steps.join(',')}`)
        const wrong = p.tensors.filter((x, j) => plan.placements[j]!.pinned !== (x.kind === 'weight' && chosen.has(x.first)))
        if (wrong.length > 0) t.fail(`seed ${seed} steps ${steps.join(',')}: ${wrong.length} tensors pinned wrongly`)
        if (plan.pinnedBytes !== expected) t.fail(`seed ${seed} steps ${steps.join(',')}: pinned ${plan.pinnedBytes} vs ${expected}`)
      }
    }
  }
  t.ok(planned > 200 && refused > 0, `${planned} step-set plans checked, ${refused} too large to fit`)
})
