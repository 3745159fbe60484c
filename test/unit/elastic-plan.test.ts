// SPDX-License-Identifier: Apache-2.0
// planElastic and the baselines: valid AIBs, modelled latency within the target, maximal choices, monotonicity.
import t from 'tap'
import {
  checkAIB,
  LatencyTargetError,
  minimumTargetMs,
  pipelineTimeline,
  planCompute,
  planElastic,
  planLoadAndExec,
  planPreloadModel,
  planStdPL,
  simulatePipeline,
  type ElasticPlan,
  type ElasticProfile,
  type PlanShape,
  type ShardRef,
} from '../../lib/plan/elastic/index.js'
import { planElasticWith } from '../../lib/plan/elastic/elastic-plan.js'
import type { BudgetRule } from '../../lib/plan/elastic/aib.js'
import { ArgumentError } from '../../lib/errors.js'
import { prng } from '../helpers/plan-problems.js'
import { randomProfile, shapeOf, sizeOf, withBits, withUniformLoaded, type RandomCase } from '../helpers/elastic-profiles.js'

const cases = 240
const eps = 1e-9

/**
 * A profile whose shards are all the same size per bitwidth (bytes[i] at bitwidths[i]), read at
 * 0.01 ms per byte, without per-job or fixed cost unless `more` says otherwise.
 */
function flatProfile(
  shape: [layers: number, shardsPerLayer: number],
  bitwidths: number[],
  bytes: readonly number[],
  layerComputeMs: number[],
  more: Partial<ElasticProfile> = {},
): ElasticProfile {
  const [layers, shardsPerLayer] = shape
  const shardBytes = (bits: number): number => bytes[bitwidths.indexOf(bits)]!
  return { layers, shardsPerLayer, bitwidths, shardBytes, readMsPerByte: 0.01, readMsPerJob: 0, layerComputeMs, fixedMs: 0, ...more }
}
const allShards = (n: number, m: number): ShardRef[] => Array.from({ length: n * m }, (_, i) => ({ layer: Math.floor(i / m), shard: i % m }))
const bitsOf = (plan: { shards: PlanShape['shards'] }): number[][] => plan.shards.map((row) => row.map((s) => s.bits))
const lowestBits = (p: ElasticProfile): number => p.bitwidths[0]!
const defaultPreloadBits = (p: ElasticProfile): number => [...p.bitwidths].reverse().find((b) => b < 32) ?? p.bitwidths[p.bitwidths.length - 1]!
const tryPlan = (f: () => ElasticPlan): ElasticPlan | undefined => {
  try {
    return f()
  } catch (err) {
    if (err instanceof LatencyTargetError) return undefined
    throw err
  }
}
/** Random targets from 5 % to 135 % of the full model's compute. */
const targetsFor = (c: RandomCase, count: number): number[] => {
  const rand = prng(c.seed * 7919)
  return Array.from({ length: count }, () => c.fullComputeMs * (0.05 + 1.3 * rand())).sort((a, b) => a - b)
}
const preloadsFor = (c: RandomCase): number[] => {
  const layer0 = Array.from({ length: c.profile.shardsPerLayer }, (_, s) => sizeOf(c.profile, 0, s, defaultPreloadBits(c.profile))).reduce((a, b) => a + b)
  return [0, Math.floor(layer0 / 3), layer0, Math.floor(layer0 * 2.5), 8 * layer0, Infinity]
}
const lexLess = (a: readonly number[], b: readonly number[]): boolean => {
  const i = a.findIndex((x, k) => x !== b[k])
  return i >= 0 && a[i]! < b[i]!
}

// The seed's Figure 6, with numbers filled in consistently (the text lost them): a 2 x 3 sub-model,
// T = 2 s, no fixed part, 1000 ms per layer of 3 shards, so slack = 0. A 2-bit shard reads in
// 100 ms (102400 bytes at 1/1024 ms per byte), 4-bit 200 ms, 6-bit 300 ms, fp32 1600 ms; no per-job
// cost. The preload buffer (307200 bytes) holds layer 0's three shards at 2 bits: bonus IO 300 ms.
// AIBs start at [300, 1300]; debiting the preloaded layer-0 shards from both leaves [0, 1000], so
// only layer 1 has budget: candidates A (6, 4, 2 bits: 600 ms) and B (2, 6, 6: 700 ms) are valid,
// C (32, 2, 2: 1800 ms) is not -- layer 1 would wait for its IO until 1800 ms and finish at 2800 ms.
const figure6 = flatProfile([2, 3], [2, 4, 6, 32], [102_400, 204_800, 307_200, 1_638_400], [0, 400, 700, 1000], { readMsPerByte: 1 / 1024 })
const figure6Candidate = (layer1: number[]): PlanShape => ({
  targetMs: 2000,
  shards: [[0, 1, 2].map((shard) => ({ shard, bits: 2, preloaded: true })), layer1.map((bits, shard) => ({ shard, bits, preloaded: false }))],
})

t.test("the seed's Figure 6: candidates A and B are valid, C stalls layer 1", async (t) => {
  t.same(checkAIB(figure6, figure6Candidate([2, 2, 2])).aib, [0, 1000 - 300], 'the lowest plan leaves 700 ms in layer 1')
  const a = checkAIB(figure6, figure6Candidate([6, 4, 2]))
  const b = checkAIB(figure6, figure6Candidate([2, 6, 6]))
  const c = checkAIB(figure6, figure6Candidate([32, 2, 2]))
  t.same([a.valid, a.aib, a.slackMs], [true, [0, 400], 0], 'A')
  t.same([b.valid, b.aib], [true, [0, 300]], 'B')
  t.same([c.valid, c.aib], [false, [0, -800]], 'C')
  t.equal(simulatePipeline(figure6, figure6Candidate([6, 4, 2])), 2000)
  t.equal(simulatePipeline(figure6, figure6Candidate([2, 6, 6])), 2000)
  t.same(pipelineTimeline(figure6, figure6Candidate([32, 2, 2])), { totalMs: 2800, ioEndMs: [0, 1800], computeStartMs: [0, 1800], stallMs: [0, 800] })
  // The planner: pass 1 lifts layer 1 to 6 bits (900 ms, 100 ms left), too little to lift any shard to fp32.
  const plan = planElastic(figure6, allShards(2, 3), { targetMs: 2000, preloadBytes: 307_200, preloadBits: 2 })
  t.same([plan.depth, plan.width, plan.uniformBits, bitsOf(plan), plan.aib], [2, 3, 6, [[2, 2, 2], [6, 6, 6]], [0, 100]])
  t.same(plan.preload.map((e) => [e.layer, e.shard, e.bits, e.bytes]), [0, 1, 2].map((s) => [0, s, 2, 102_400]))
  t.same([plan.preloadBytes, plan.loadBytes, plan.modelledMs], [307_200, 3 * 307_200, 2000])
  t.same(plan.bitsHistogram, { 2: 3, 4: 0, 6: 3, 32: 0 })
  t.same(checkAIB(figure6, plan).aib, plan.aib, 'checkAIB recomputes the plan ledger')
})

// No IO cost: compute alone decides. Layer of m shards: 10 * m ms.
const computeOnly = (c: number[]): ElasticProfile => flatProfile([4, c.length - 1], [2, 6], [1000, 3000], c, { readMsPerByte: 0 })

t.test('compute planning picks the most shards, then the deeper sub-model', async (t) => {
  const linear = computeOnly([0, 10, 20, 30, 40])
  const at = (p: ElasticProfile, targetMs: number, preloadBytes = 0): number[] => {
    const s = planCompute(p, { targetMs, preloadBytes })
    return [s.depth, s.width, s.preloaded]
  }
  t.same(at(linear, 60), [3, 2, 0], '2 x 3 and 3 x 2 both fit: the deeper wins')
  t.same(at(linear, 45), [4, 1, 0], 'four shards as 4 x 1, 2 x 2 or 1 x 4: 4 x 1')
  t.same(at(computeOnly([0, 10, 12, 14, 16]), 50), [3, 4, 0], 'a GPU-like profile: 3 x 4 (12 shards) beats the deeper 4 x 2')
  // With IO: 10 ms per 2-bit shard. At T = 190 the 4 x 4 compute (160 ms) fits but layer 0's IO (40 ms)
  // exceeds the 30 ms slack; 4 x 3 and 3 x 4 both fit, 4 x 3 is deeper. Preloading one 6-bit shard
  // (3000 bytes) leaves 30 ms of IO in layer 0, and 4 x 4 fits.
  const io = flatProfile([4, 4], [2, 6], [1000, 3000], [0, 10, 20, 30, 40])
  t.same(at(io, 200), [4, 4, 0], 'at T = 200 the IO of every layer just fits (AIBs all 0)')
  t.same(planElastic(io, [], { targetMs: 200 }).aib, [0, 0, 0, 0])
  t.same(at(io, 190), [4, 3, 0])
  t.same(at(io, 190, 3000), [4, 4, 1])
  t.same(planElastic(io, [], { targetMs: 190, preloadBytes: 3000 }).aib, [0, 0, 0, 0])
  t.same(at(io, 190, 2999), [4, 3, 0], 'one byte less preloads nothing')
  t.same(at(io, 190, 12_000), [4, 4, 4])
})

t.test('an unreachable target throws ERR_FLEXPIPE_LATENCY with the minimum target, which plans', async (t) => {
  // 1 x 1: fixed 5 ms, layer 10 ms, its shard reads in 2 + 10 ms: T >= 10 + max(5, 12) = 22.
  const p = flatProfile([1, 1], [2, 6], [1000, 3000], [0, 10], { readMsPerJob: 2, fixedMs: 5 })
  const err = t.throws(() => planElastic(p, [], { targetMs: 20 })) as LatencyTargetError
  t.type(err, LatencyTargetError)
  t.same([err.code, err.targetMs, err.minimumMs, err.minimumPreloadBytes], ['ERR_FLEXPIPE_LATENCY', 20, 22, 3000])
  t.equal(
    err.message,
    'failed to plan the elastic pipeline: no sub-model finishes within targetMs=20 (minimumMs=22); ' +
      'raise the target to at least 22 ms, or the preload buffer to at least 3000 bytes',
  )
  t.equal(planElastic(p, [], { targetMs: 22 }).modelledMs, 22)
  t.equal(planElastic(p, [], { targetMs: 20, preloadBytes: 3000 }).modelledMs, 15, 'the preloaded shard needs no IO')
  t.equal(minimumTargetMs(p, { preloadBytes: 3000 }), 15)
  const computeBound = t.throws(() => planElastic(p, [], { targetMs: 14 })) as LatencyTargetError
  t.equal(computeBound.minimumPreloadBytes, undefined, 'no buffer helps when compute alone exceeds T')
  t.match(computeBound.message, /minimumMs=22\); raise the target to at least 22 ms$/)
})

t.test('random profiles: the reported minimum target plans and a microsecond less does not', async (t) => {
  const problems: string[] = []
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    for (const preloadBytes of [0, preloadsFor(c)[2]!]) {
      const min = minimumTargetMs(c.profile, { preloadBytes })
      if (!tryPlan(() => planElastic(c.profile, c.importance, { targetMs: min, preloadBytes }))) problems.push(`seed ${seed} P=${preloadBytes}: ${min} does not plan`)
      if (min < 1e-3) continue
      try {
        planElastic(c.profile, c.importance, { targetMs: min - 1e-3, preloadBytes })
        problems.push(`seed ${seed} P=${preloadBytes}: ${min - 1e-3} plans`)
      } catch (err) {
        const e = err as LatencyTargetError
        if (e.minimumMs !== min) problems.push(`seed ${seed}: error minimum ${e.minimumMs} != ${min}`)
        const fixed = e.minimumPreloadBytes === undefined || tryPlan(() => planElastic(c.profile, c.importance, { targetMs: min - 1e-3, preloadBytes: e.minimumPreloadBytes! }))
        if (!fixed) problems.push(`seed ${seed}: minimumPreloadBytes ${e.minimumPreloadBytes} does not plan`)
      }
    }
  }
  t.same(problems.slice(0, 5), [])
})

t.test('pass 2 raises shards in importance order as far as the budget allows', async (t) => {
  // One layer of three shards, 20/40/60 ms at 2/4/6 bits, 150 ms of budget: pass 1 gives 4 bits
  // (120 ms), the 30 ms left lifts the most important shard to 6 bits.
  const p = flatProfile([1, 3], [2, 4, 6], [2000, 4000, 6000], [0, 1, 2, 3])
  const plan = planElastic(p, [{ layer: 0, shard: 2 }, { layer: 0, shard: 0 }], { targetMs: 153 })
  t.same([plan.uniformBits, bitsOf(plan), plan.aib], [4, [[4, 4, 6]], [10]])
  t.same(bitsOf(planElastic(p, [], { targetMs: 153 })), [[6, 4, 4]], 'shards left out of the ranking follow in layer order')
})

t.test('measured accuracies: bits are raised only where the dev set measured a gain', async (t) => {
  // The profile of the pass-2 test above: seed rule 4 bits uniform, then shard 2 to 6 bits.
  const p = flatProfile([1, 3], [2, 4, 6], [2000, 4000, 6000], [0, 1, 2, 3])
  const ranking = [{ layer: 0, shard: 2 }, { layer: 0, shard: 0 }]
  const gain = (g: number[]) => [g]
  // No gain anywhere (the model is as accurate at the lowest bitwidth): nothing is raised.
  const flat = planElastic(p, { ranking, accuracy: { lowest: 0.95, highest: 0.95, gain: gain([0, 0, -0.01]) } }, { targetMs: 153 })
  t.same([flat.uniformBits, bitsOf(flat), flat.aib], [2, [[2, 2, 2]], [90]], 'no gain measured: every shard at the lowest bitwidth')
  // The model gains from bits, but only shard 0 alone: pass 1 as the seed, pass 2 skips shard 2.
  const some = planElastic(p, { ranking, accuracy: { lowest: 0.9, highest: 0.95, gain: gain([0.01, 0, 0]) } }, { targetMs: 153 })
  t.same([some.uniformBits, bitsOf(some)], [4, [[6, 4, 4]]], 'pass 2 raises the shard with a gain')
  // Without accuracies (a bare ranking) and with every shard gaining: the seed's plan.
  const seed = planElastic(p, ranking, { targetMs: 153 })
  t.same(bitsOf(seed), [[4, 4, 6]])
  t.same(bitsOf(planElastic(p, { ranking, accuracy: { lowest: 0.9, highest: 0.95, gain: gain([0.01, 0.01, 0.02]) } }, { targetMs: 153 })), bitsOf(seed))
  // The preload buffer holds shards at the lowest bitwidth when no gain was measured (3 of 2000 bytes
  // fit in 6000, where the default preload bitwidth, 6, holds one).
  const pre = planElastic(p, { ranking, accuracy: { lowest: 0.95, highest: 0.95, gain: gain([0, 0, 0]) } }, { targetMs: 153, preloadBytes: 6000 })
  t.same(pre.preload.map((e) => e.bits), [2, 2, 2], 'preloaded at the lowest bitwidth')
  t.same(planElastic(p, ranking, { targetMs: 153, preloadBytes: 6000 }).preload.map((e) => e.bits), [6], 'the seed rule preloads at 6 bits')
  t.throws(() => planElastic(p, { ranking, accuracy: { lowest: 0.9, highest: 0.95, gain: [[0, 0]] } }, { targetMs: 153 }), ArgumentError)
})

t.test('random profiles and accuracies: plans stay valid and within the target, and never raise a shard without a gain', async (t) => {
  const problems: string[] = []
  let plans = 0
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    const rand = prng(seed * 31)
    const { layers, shardsPerLayer: M } = c.profile
    const gain = Array.from({ length: layers }, () => Array.from({ length: M }, () => (rand() < 0.5 ? 0.01 * rand() : -0.01 * rand())))
    const highest = rand() < 0.5 ? 0.9 : 0.95
    const accuracy = { lowest: 0.93, highest, gain }
    const preloads = preloadsFor(c)
    for (const [i, targetMs] of targetsFor(c, 3).entries()) {
      const preloadBytes = preloads[(seed + i) % preloads.length]!
      const plan = tryPlan(() => planElastic(c.profile, { ranking: c.importance, accuracy }, { targetMs, preloadBytes }))
      if (!plan) continue
      plans++
      const what = `seed ${seed} T=${targetMs} P=${preloadBytes}`
      if (!checkAIB(c.profile, plan).valid) problems.push(`${what}: invalid AIBs`)
      if (!(plan.modelledMs <= targetMs + eps)) problems.push(`${what}: modelled ${plan.modelledMs} > T`)
      const low = lowestBits(c.profile)
      if (highest <= 0.93 && plan.uniformBits !== low) problems.push(`${what}: uniform ${plan.uniformBits} bits without a measured gain`)
      plan.shards.forEach((row, k) =>
        row.forEach((s) => {
          if (!s.preloaded && s.bits !== plan.uniformBits && gain[k]![s.shard]! <= 0) problems.push(`${what}: layer ${k} shard ${s.shard} raised without a gain`)
        }),
      )
    }
  }
  t.ok(plans > cases, `${plans} plans checked`)
  t.same(problems.slice(0, 5), [])
})

/** A random sub-model accuracy table [depth - 1][width - 1][bi], in steps of 1 % so that ties occur. */
function randomTable(rand: () => number, p: ElasticProfile): number[][][] {
  return Array.from({ length: p.layers }, () => Array.from({ length: p.shardsPerLayer }, () => p.bitwidths.map(() => 0.5 + Math.floor(rand() * 40) / 100)))
}
const noGain = (p: ElasticProfile): number[][] => Array.from({ length: p.layers }, () => new Array<number>(p.shardsPerLayer).fill(0))

t.test('a sub-model accuracy table: the most accurate plan that meets T, ties to the larger sub-model, then fewer bits', async (t) => {
  // 2 layers x 2 shards; a shard reads in 20 ms at 2 bits, 40 at 4, 320 at fp32; 10 ms per layer of
  // 1 shard, 15 of 2; no fixed part.
  const p = flatProfile([2, 2], [2, 4, 32], [2000, 4000, 32000], [0, 10, 15])
  const ranking = allShards(2, 2)
  // table[d - 1][w - 1][bi]: 1 x 2 at 4 bits is the most accurate; 2 x 2 at 2 bits equals 1 x 1 at fp32.
  const subModels = [
    [[0.8, 0.8, 0.85], [0.86, 0.9, 0.9]],
    [[0.8, 0.82, 0.82], [0.85, 0.85, 0.88]],
  ]
  const plan = (targetMs: number, o: { preloadBytes?: number; preloadBits?: number } = {}): ElasticPlan =>
    planElastic(p, { ranking, accuracy: { lowest: 0.85, highest: 0.88, gain: noGain(p), subModels } }, { targetMs, ...o })
  const shape = (e: ElasticPlan): string => `${e.depth}x${e.width}@${e.uniformBits} ${JSON.stringify(bitsOf(e))}`
  // 1 x 2 at 4 bits: IO 80 ms then 15 ms of compute.
  t.equal(shape(plan(95)), '1x2@4 [[4,4]]', 'the most accurate candidate, not the largest sub-model')
  t.equal(shape(plan(1000)), '1x2@4 [[4,4]]', 'also when everything fits: fp32 1 x 2 measured no better (a tie goes to fewer bits)')
  // Below 95 ms 1 x 2 at 4 bits misses; 1 x 2 at 2 bits (0.86, 55 ms) is the next best that fits.
  t.equal(shape(plan(94)), '1x2@2 [[2,2]]')
  // Preloading layer 0's two shards at 4 bits (8000 bytes) removes the IO: 1 x 2 at 4 bits fits in 15 ms.
  const pre = plan(15, { preloadBytes: 8000 })
  t.same([shape(pre), pre.preload.map((e) => e.bits)], ['1x2@4 [[4,4]]', [4, 4]], 'the preload buffer holds the chosen bitwidth')
  // With preloadBits given, preloaded shards keep it: 2 bits (4000 bytes) fit, and the loaded ones follow the table.
  const given = plan(15, { preloadBytes: 4000, preloadBits: 2 })
  t.same([given.depth, given.width, given.preload.map((e) => e.bits)], [1, 2, [2, 2]])
  // Below every candidate: the typed error with the minimum target (1 x 1 at 2 bits: 20 + 10 ms).
  t.throws(() => plan(29), LatencyTargetError)
  t.doesNotThrow(() => plan(30))
  // Ties in accuracy: 2 x 2 at 2 bits (0.85) and 1 x 1 at fp32 (0.85) when nothing better fits.
  const tie = [[[0.8, 0.8, 0.85], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.85, 0.85, 0.85]]]
  const both = planElastic(p, { ranking, accuracy: { lowest: 0.85, highest: 0.85, gain: noGain(p), subModels: tie } }, { targetMs: 1000 })
  t.equal(shape(both), '2x2@2 [[2,2],[2,2]]', 'a tie goes to the larger sub-model, then to the lowest bitwidth')
  t.throws(
    () => planElastic(p, { ranking, accuracy: { lowest: 0.85, highest: 0.88, gain: noGain(p), subModels: [subModels[0]!] } }, { targetMs: 100 }),
    { name: 'ArgumentError', message: /accuracy\.subModels: expected \[2\]\[2\]\[3\]/ },
  )
})

t.test('random profiles and accuracy tables: the plan is the most accurate valid candidate, at least as accurate as every baseline', async (t) => {
  const problems: string[] = []
  let plans = 0
  let baselines = 0
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    const p = c.profile
    const rand = prng(seed * 131)
    const subModels = randomTable(rand, p)
    const acc = (d: number, w: number, bits: number): number => subModels[d - 1]![w - 1]![p.bitwidths.indexOf(bits)]!
    const importance = { ranking: c.importance, accuracy: { lowest: 0.9, highest: 0.9, gain: noGain(p), subModels } }
    const preloads = preloadsFor(c)
    for (const [i, targetMs] of targetsFor(c, 4).entries()) {
      const preloadBytes = preloads[(seed + i) % preloads.length]!
      const say = (x: string): number => problems.push(`seed ${seed} T=${targetMs} P=${preloadBytes}: ${x}`)
      const plan = tryPlan(() => planElastic(p, importance, { targetMs, preloadBytes }))
      if (!plan) continue
      plans++
      if (!checkAIB(p, plan).valid || !(plan.modelledMs <= targetMs + eps)) say('invalid or late')
      if (plan.shards.flat().some((s) => s.bits !== plan.uniformBits)) say('not uniform (no shard measured a gain)')
      const mine = acc(plan.depth, plan.width, plan.uniformBits)
      // Brute force over every candidate, built independently: the largest preloaded prefix at its bits.
      for (let depth = 1; depth <= p.layers; depth++) {
        for (let width = 1; width <= p.shardsPerLayer; width++) {
          for (const bits of p.bitwidths) {
            if (acc(depth, width, bits) <= mine) continue
            const cand = shapeOf(p, { targetMs, depth, width, preloadBytes, preloadBits: bits }, bits)
            if (checkAIB(p, cand).valid) say(`${depth} x ${width} at ${bits} bits is valid and more accurate`)
          }
        }
      }
      for (const base of [
        ...p.bitwidths.map((bits) => tryPlan(() => planStdPL(p, { targetMs, bits }))),
        tryPlan(() => planLoadAndExec(p, { targetMs })),
      ]) {
        if (!base) continue
        baselines++
        if (acc(base.depth, base.width, base.uniformBits) > mine) say(`${base.planner}-${base.uniformBits} is more accurate`)
      }
      // Targets ascend while P varies, so compare only at equal P via a fresh plan at the next target.
      const next = tryPlan(() => planElastic(p, importance, { targetMs: targetMs * 1.5, preloadBytes }))
      if (next && acc(next.depth, next.width, next.uniformBits) < mine) say('a larger target planned less accurately')
    }
  }
  t.ok(plans > 2 * cases, `${plans} plans and ${baselines} baseline plans checked`)
  t.same(problems.slice(0, 5), [])
})

t.test('a size table that shrinks at a higher bitwidth needs a second walk over the ranking', async (t) => {
  // Shards a, b, c of one layer at 2 / 4 bits: a 100 / 300 ms, b 300 / 250 ms, c 100 / 1000 ms;
  // 660 ms of budget. Pass 1: 2 bits (500 ms). Walk 1 (a, b, c): a to 4 needs 700 ms, no; b to 4
  // frees 50 ms; c no. Walk 2: a to 4 now needs 650 ms: yes. Walk 3 raises nothing.
  const bytes = [[[100, 300], [300, 250], [100, 1000]]]
  const p = flatProfile([1, 3], [2, 4], [], [0, 1, 2, 10], { shardBytes: bytes, readMsPerByte: 1 })
  const plan = planElastic(p, allShards(1, 3), { targetMs: 670 })
  t.same([plan.uniformBits, bitsOf(plan), plan.aib], [2, [[4, 4, 2]], [10]])
})

/** Every property of one flexpipe plan that can be checked against the profile without the planner. */
function planProblems(c: RandomCase, plan: ElasticPlan, preloadBytes: number): string[] {
  const p = c.profile
  const out: string[] = []
  const T = plan.targetMs
  const check = checkAIB(p, plan)
  if (!check.valid || plan.aib.some((x) => x < 0)) out.push(`invalid AIBs ${plan.aib.join(', ')}`)
  if (check.aib.some((x, k) => x !== plan.aib[k])) out.push('checkAIB disagrees with plan.aib')
  const ms = simulatePipeline(p, plan)
  if (!(ms <= T + eps) || ms !== plan.modelledMs) out.push(`modelled ${ms} (plan says ${plan.modelledMs}) > T ${T}`)
  const flat = plan.shards.flatMap((row, layer) => row.map((s, j) => ({ ...s, layer, j })))
  const preloadBits = defaultPreloadBits(p)
  if (plan.preloadBytes > preloadBytes) out.push(`preload ${plan.preloadBytes} > P ${preloadBytes}`)
  const firstLoaded = flat.findIndex((s) => !s.preloaded)
  if (firstLoaded >= 0 && flat.slice(firstLoaded).some((s) => s.preloaded)) out.push('preloaded shards are not a prefix')
  const ref = shapeOf(p, { targetMs: T, depth: plan.depth, width: plan.width, preloadBytes, preloadBits }, 0)
  if (ref.shards.flat().some((s, i) => s.preloaded !== flat[i]!.preloaded)) out.push('the preload set is not the largest prefix that fits')
  if (flat.some((s) => s.shard !== s.j || (s.preloaded && s.bits !== preloadBits) || (!s.preloaded && s.bits < plan.uniformBits))) out.push('shard index or bits')
  if (JSON.stringify(plan.preload) !== JSON.stringify(flat.filter((s) => s.preloaded).map(({ layer, shard, bits, bytes }) => ({ layer, shard, bits, bytes }))))
    out.push('preload list')
  return out
}

/** Maximality: no better sub-model, no higher uniform bitwidth, no single raise meets T (by simulation). */
function maximalityProblems(c: RandomCase, plan: ElasticPlan, preloadBytes: number): string[] {
  const p = c.profile
  const T = plan.targetMs
  const out: string[] = []
  const o = { targetMs: T, preloadBytes, preloadBits: defaultPreloadBits(p) }
  for (let depth = 1; depth <= p.layers; depth++) {
    for (let width = 1; width <= p.shardsPerLayer; width++) {
      const better = depth * width > plan.depth * plan.width || (depth * width === plan.depth * plan.width && depth > plan.depth)
      if (better && simulatePipeline(p, shapeOf(p, { ...o, depth, width }, lowestBits(p))) <= T - eps) out.push(`${depth} x ${width} fits too`)
    }
  }
  const loaded = plan.shards.some((row) => row.some((s) => !s.preloaded))
  for (const bits of p.bitwidths.filter((b) => b > plan.uniformBits && loaded)) {
    if (simulatePipeline(p, withUniformLoaded(plan, bits)) <= T - eps) out.push(`uniform ${bits} bits fit`)
  }
  plan.shards.forEach((row, k) =>
    row.forEach((s, j) => {
      for (const bits of p.bitwidths.filter((b) => b > s.bits && !s.preloaded)) {
        if (simulatePipeline(p, withBits(plan, k, j, bits)) <= T - eps) out.push(`shard ${k}/${j} could be raised to ${bits}`)
      }
    }),
  )
  return out
}

/** Equal-size shards: a more important shard in the same or a later layer never has fewer bits. */
function importanceProblems(c: RandomCase, plan: ElasticPlan): string[] {
  const out: string[] = []
  const ranked = c.importance.filter((r) => r.layer < plan.depth && r.shard < plan.width).map((r) => ({ ...r, s: plan.shards[r.layer]![r.shard]! }))
  const loaded = ranked.filter((r) => !r.s.preloaded)
  loaded.forEach((x, i) => {
    for (const y of loaded.slice(i + 1)) if (x.layer >= y.layer && x.s.bits < y.s.bits) out.push(`${x.layer}/${x.shard} < ${y.layer}/${y.shard}`)
  })
  return out
}

t.test('random profiles: plans are valid, meet the target, preload a prefix within P and are maximal', async (t) => {
  const problems: string[] = []
  let plans = 0
  let failures = 0
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    const preloads = preloadsFor(c)
    for (const [i, targetMs] of targetsFor(c, 4).entries()) {
      const preloadBytes = preloads[(seed + i) % preloads.length]!
      const plan = tryPlan(() => planElastic(c.profile, c.importance, { targetMs, preloadBytes }))
      if (!plan) {
        failures++
        continue
      }
      plans++
      const found = [...planProblems(c, plan, preloadBytes), ...maximalityProblems(c, plan, preloadBytes), ...(c.uniformSizes ? importanceProblems(c, plan) : [])]
      problems.push(...found.map((x) => `seed ${seed} T=${targetMs} P=${preloadBytes}: ${x}`))
    }
  }
  t.comment(`${plans} plans checked, ${failures} targets below the minimum`)
  t.ok(plans >= 4 * cases * 0.7, 'most random targets plan')
  t.same(problems.slice(0, 5), [])
})

t.test('random profiles: a larger target never gives a smaller (n*m, n, pass-1 bits)', async (t) => {
  // The natural (n*m, pass-1 bits) is not monotone: when a deeper sub-model with as many shards becomes
  // feasible, compute planning switches to it, and its tighter budgets may allow fewer bits (hand
  // example below). For a fixed (n, m) the AIBs only grow with T, so adding n makes the order hold.
  const problems: string[] = []
  let natural = 0
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    const preloadBytes = preloadsFor(c)[seed % 6]!
    let prev: ElasticPlan | undefined
    for (const targetMs of targetsFor(c, 8)) {
      const plan = tryPlan(() => planElastic(c.profile, c.importance, { targetMs, preloadBytes }))
      if (prev && !plan) problems.push(`seed ${seed}: T=${targetMs} fails after a smaller T planned`)
      if (!plan) continue
      if (prev && lexLess([plan.depth * plan.width, plan.depth, plan.uniformBits], [prev.depth * prev.width, prev.depth, prev.uniformBits]))
        problems.push(`seed ${seed}: T=${targetMs} ${plan.depth}x${plan.width}@${plan.uniformBits} after ${prev.depth}x${prev.width}@${prev.uniformBits}`)
      if (prev && lexLess([plan.depth * plan.width, plan.uniformBits], [prev.depth * prev.width, prev.uniformBits])) natural++
      prev = plan
    }
  }
  t.comment(`(n*m, pass-1 bits) alone decreased ${natural} times (a deeper sub-model of as many shards)`)
  t.same(problems.slice(0, 5), [])
  // 2 x 2 model, a layer of 1 or 2 shards takes 100 ms, shards read in 10 / 30 ms at 2 / 6 bits.
  const p = flatProfile([2, 2], [2, 6, 32], [1000, 3000, 16_000], [0, 100, 100])
  const a = planElastic(p, [], { targetMs: 170 })
  const b = planElastic(p, [], { targetMs: 215 })
  t.same([a.depth, a.width, a.uniformBits], [1, 2, 6], 'T = 170: only one layer fits; 70 ms of slack reads both shards at 6 bits')
  t.same([b.depth, b.width, b.uniformBits], [2, 1, 2], 'T = 215: 2 x 1 fits and is deeper; 15 ms of slack allows only 2 bits')
})

t.test('random profiles: a larger preload buffer never gives a smaller (n*m, n, pass-1 bits)', async (t) => {
  // Shards that become preloaded need no IO, so every AIB test gets easier. Fidelity itself is not
  // monotone: preloaded shards are held at preloadBits (6) where a loaded one may have been lifted
  // to fp32, and a higher pass-1 bitwidth can use up the budget pass 2 spent on one fp32 shard.
  const problems: string[] = []
  let dominated = 0
  let pairs = 0
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    const targetMs = targetsFor(c, 3)[2]!
    let prev: ElasticPlan | undefined
    for (const preloadBytes of preloadsFor(c)) {
      const plan = tryPlan(() => planElastic(c.profile, c.importance, { targetMs, preloadBytes }))
      if (prev && !plan) problems.push(`seed ${seed}: P=${preloadBytes} fails after a smaller P planned`)
      if (!plan) continue
      if (plan.preloadBytes > preloadBytes) problems.push(`seed ${seed}: preload ${plan.preloadBytes} > ${preloadBytes}`)
      if (prev && lexLess([plan.depth * plan.width, plan.depth, plan.uniformBits], [prev.depth * prev.width, prev.depth, prev.uniformBits]))
        problems.push(`seed ${seed}: P=${preloadBytes} gives ${plan.depth}x${plan.width}@${plan.uniformBits} after ${prev.depth}x${prev.width}@${prev.uniformBits}`)
      if (prev && prev.depth === plan.depth && prev.width === plan.width) {
        const [x, y] = [bitsOf(plan).flat().sort((a, b) => b - a), bitsOf(prev).flat().sort((a, b) => b - a)]
        pairs++
        if (x.every((bits, i) => bits >= y[i]!)) dominated++
      }
      prev = plan
    }
  }
  t.comment(`same sub-model, larger P: the sorted bitwidths dominate in ${dominated} of ${pairs} pairs`)
  t.same(problems.slice(0, 5), [])
  // 2 x 3, shards read in 10 / 30 / 160 ms at 2 / 6 / 32 bits, 175 ms per layer, 40 ms of slack.
  // P = 0: layer 0's IO keeps pass 1 at 2 bits; layer 1's budget (185 ms) lifts one shard to fp32.
  // P = layer 0 at 6 bits: pass 1 reaches 6 bits (90 ms in layer 1), leaving 125 ms: no fp32 shard.
  const p = flatProfile([2, 3], [2, 6, 32], [1000, 3000, 16_000], [0, 60, 120, 175])
  const ranking = [...allShards(2, 3).slice(3), ...allShards(2, 3).slice(0, 3)]
  t.same(bitsOf(planElastic(p, ranking, { targetMs: 390 })), [[2, 2, 2], [32, 2, 2]])
  t.same(bitsOf(planElastic(p, ranking, { targetMs: 390, preloadBytes: 9000 })), [[6, 6, 6], [6, 6, 6]])
})

t.test('the AIB test is exact: a prefix-preloaded plan is valid iff its simulated pipeline meets T', async (t) => {
  const problems: string[] = []
  let valid = 0
  let tested = 0
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    const p = c.profile
    const rand = prng(seed * 104729)
    for (let k = 0; k < 20; k++) {
      const depth = 1 + Math.floor(rand() * p.layers)
      const width = 1 + Math.floor(rand() * p.shardsPerLayer)
      const o = { targetMs: c.fullComputeMs * (0.1 + 1.2 * rand()), depth, width, preloadBytes: preloadsFor(c)[k % 6]!, preloadBits: defaultPreloadBits(p) }
      const shape = shapeOf(p, o, () => p.bitwidths[Math.floor(rand() * p.bitwidths.length)]!)
      const check = checkAIB(p, shape)
      const margin = Math.min(check.slackMs, ...check.aib)
      if (Math.abs(margin) < 1e-6) continue
      tested++
      if (check.valid) valid++
      const ms = simulatePipeline(p, shape)
      if (check.valid !== ms <= o.targetMs) problems.push(`seed ${seed} #${k}: valid=${check.valid}, modelled ${ms}, T ${o.targetMs}`)
    }
  }
  t.comment(`${tested} random plans, ${valid} valid`)
  t.ok(valid > tested / 10 && valid < tested * 0.9, 'both outcomes occur')
  t.same(problems.slice(0, 5), [])
})

t.test('baselines: StdPL is uniform and valid, Load&Exec reads then runs within T, PreloadModel only computes', async (t) => {
  const problems: string[] = []
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    const p = c.profile
    const [lowest, highest] = [p.bitwidths[0]!, p.bitwidths[p.bitwidths.length - 1]!]
    for (const targetMs of targetsFor(c, 3)) {
      const say = (x: string): number => problems.push(`seed ${seed} T=${targetMs}: ${x}`)
      const ours = tryPlan(() => planElastic(p, c.importance, { targetMs }))
      for (const bits of new Set([lowest, defaultPreloadBits(p), highest])) {
        const std = tryPlan(() => planStdPL(p, { targetMs, bits }))
        if (!std) continue
        if (!checkAIB(p, std).valid || std.aib.some((x) => x < 0) || std.modelledMs > targetMs) say(`StdPL-${bits} invalid`)
        if (std.shards.flat().some((s) => s.bits !== bits || s.preloaded) || std.preload.length > 0 || std.uniformBits !== bits) say(`StdPL-${bits} not uniform`)
        if (!ours) say(`StdPL-${bits} plans where flexpipe does not`)
        else if (ours.depth === std.depth && ours.width === std.width && ours.uniformBits < bits) say(`flexpipe pass 1 below StdPL-${bits}`)
        if (bits === lowest && ours && lexLess([ours.depth * ours.width, ours.depth], [std.depth * std.width, std.depth])) say('flexpipe smaller than StdPL-lowest')
      }
      const le = tryPlan(() => planLoadAndExec(p, { targetMs }))
      if (le) {
        const io = le.loadBytes * p.readMsPerByte + le.depth * p.readMsPerJob
        if (!(le.modelledMs <= targetMs) || Math.abs(le.modelledMs - (io + p.fixedMs + le.depth * p.layerComputeMs[le.width]!)) > 1e-6) say('Load&Exec time')
        if (le.schedule !== 'load-then-execute' || le.shards.flat().some((s) => s.bits !== highest) || !checkAIB(p, le).valid) say('Load&Exec shape')
      }
      const pm = tryPlan(() => planPreloadModel(p, { targetMs, bits: lowest }))
      if (!pm) continue
      const compute = p.fixedMs + pm.depth * p.layerComputeMs[pm.width]!
      if (pm.loadBytes !== 0 || pm.preload.length !== p.layers * p.shardsPerLayer || Math.abs(pm.modelledMs - compute) > 1e-9) say('PreloadModel')
      if (pm.preloadBytes !== pm.preload.reduce((sum, e) => sum + sizeOf(p, e.layer, e.shard, lowest), 0)) say('PreloadModel bytes')
      if (ours && lexLess([pm.depth * pm.width, pm.depth], [ours.depth * ours.width, ours.depth])) say('PreloadModel smaller than flexpipe')
    }
  }
  t.same(problems.slice(0, 5), [])
})

t.test('baselines report their own minimum target, at which they plan', async (t) => {
  const c = randomProfile(1)
  const bits = c.profile.bitwidths
  t.same(bits, [2, 3, 4, 5, 6, 32])
  const planners = [
    (targetMs: number) => planStdPL(c.profile, { targetMs, bits: 6 }),
    (targetMs: number) => planLoadAndExec(c.profile, { targetMs }),
    (targetMs: number) => planPreloadModel(c.profile, { targetMs, bits: 32 }),
  ]
  for (const plan of planners) {
    const err = t.throws(() => plan(0.5)) as LatencyTargetError
    t.equal(err.code, 'ERR_FLEXPIPE_LATENCY')
    t.equal(err.minimumPreloadBytes, undefined)
    t.ok(plan(err.minimumMs).modelledMs <= err.minimumMs, err.message)
  }
  t.match((t.throws(() => planStdPL(c.profile, { targetMs: 0.5, bits: 6 })) as Error).message, /^failed to plan the StdPL-6 baseline: /)
})

t.test('mutation: an AIB rule that debits only the own layer lets plans miss the target', async (t) => {
  const ownLayer: BudgetRule = (startMs, computeMs, debits) => Float64Array.from(debits, (d, k) => startMs + k * computeMs - d)
  let late = 0
  let plans = 0
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomProfile(seed)
    for (const targetMs of targetsFor(c, 3)) {
      const plan = tryPlan(() => planElasticWith(c.profile, c.importance, { targetMs }, ownLayer))
      if (!plan) continue
      plans++
      if (simulatePipeline(c.profile, plan) > targetMs + eps) late++
    }
  }
  t.comment(`the mutant misses T in ${late} of ${plans} plans`)
  t.ok(late > 0, 'the "modelled latency <= T" property catches the mutant')
})

t.test('invalid profiles, rankings and options are rejected with the field that is wrong', async (t) => {
  const ok = figure6
  const plan = (p: ElasticProfile, o: object = { targetMs: 2000 }, importance: ShardRef[] = []) => () => planElastic(p, importance, { targetMs: 2000, ...o })
  t.throws(plan({ ...ok, layers: 0 }), { constructor: ArgumentError, message: 'profile.layers: expected integer >= 1, got 0' })
  t.throws(plan({ ...ok, bitwidths: [4, 2] }), { message: 'profile.bitwidths: expected ascending distinct integers 1..32, got [4, 2]' })
  t.throws(plan({ ...ok, layerComputeMs: [0, 1, 2] }), { message: /^profile.layerComputeMs: expected 4 entries/ })
  t.throws(plan({ ...ok, readMsPerByte: -1 }), { message: 'profile.readMsPerByte: expected finite number >= 0, got -1' })
  t.throws(plan({ ...ok, shardBytes: () => 1.5 }), { message: 'profile.shardBytes: expected integer >= 0 for layer 0, shard 0, 2 bits, got 1.5' })
  t.throws(plan({ ...ok, shardBytes: [[[1, 2, 3, 4]]] }), { message: /^profile.shardBytes: expected a function or a table of 2 layers/ })
  t.throws(plan({ ...ok, shardBytes: [[[1, 2, 3, 4]], [[1, 2, 3]]] }), { message: /^profile.shardBytes\[0\]\[1\]: expected 4 sizes/ })
  t.throws(plan(ok, { preloadBits: 5 }), { message: 'preloadBits: expected one of the profile\'s bitwidths [2, 4, 6, 32], got 5' })
  t.throws(plan(ok, { preloadBytes: -1 }), { message: 'preloadBytes: expected integer >= 0 or Infinity, got -1' })
  t.throws(plan(ok, { targetMs: NaN }), { message: 'targetMs: expected finite number >= 0, got NaN' })
  t.throws(plan(ok, {}, [{ layer: 2, shard: 0 }]), { message: 'importance[0]: expected { layer: 0..1, shard: 0..2 }, got {"layer":2,"shard":0}' })
  t.throws(plan(ok, {}, [{ layer: 1, shard: 0 }, { layer: 1, shard: 0 }]), { message: 'importance[1]: layer 1 shard 0 is ranked twice' })
  t.throws(() => planStdPL(ok, { targetMs: 1, bits: 8 }), ArgumentError)
  t.throws(() => checkAIB(ok, { targetMs: 1, shards: [] }), { message: 'plan.shards: expected 1..2 layers of 1..3 shards, got 0 x 0' })
  t.throws(() => checkAIB(ok, { targetMs: 1, shards: [[{ shard: 0, bits: 2, preloaded: false }], []] }), { message: /^plan.shards\[1\]: expected 1 shards/ })
  const outside = { targetMs: 1, shards: [[{ shard: 3, bits: 2, preloaded: false }]] }
  t.throws(() => simulatePipeline(ok, outside), { message: /^plan.shards\[0\]\[0\].shard: expected integer 0..2/ })
})

t.test('plans are deterministic and planning a 12 x 12 model is fast', async (t) => {
  const c = [...Array(60).keys()].map((s) => randomProfile(s + 1)).find((x) => x.profile.layers * x.profile.shardsPerLayer >= 100)!
  const o = { targetMs: c.fullComputeMs * 0.6, preloadBytes: preloadsFor(c)[2]! }
  t.same(tryPlan(() => planElastic(c.profile, c.importance, o)), tryPlan(() => planElastic(c.profile, c.importance, o)))
  const t0 = performance.now()
  for (let i = 0; i < 20; i++) tryPlan(() => planElastic(c.profile, c.importance, o))
  t.comment(`${c.profile.layers} x ${c.profile.shardsPerLayer}: ${((performance.now() - t0) / 20).toFixed(2)} ms per plan`)
})
