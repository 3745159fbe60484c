// SPDX-License-Identifier: Apache-2.0
// Planning for a memory budget, as FlexNN does it: layer slicing (lib/plan/budget/slicing.ts) for a per-layer
// limit, then the preload-aware memory plan (lib/plan/memory/preload-plan.ts) of the resulting program; when
// the plan fails (fragmentation, no room to preload) the per-layer limit tightens and slicing runs
// again. A budget change first tries the current slicing (re-planning memory only) and re-slices only
// when that fails. Pure.
import { MemoryBudgetError, PlanInfeasibleError } from '../../errors.js'
import { planMemory } from '../memory/memory-plan.js'
import { pinPrefixPlanner, planOnDemandFirstFit, planPreload, type PreloadPlan } from '../memory/preload-plan.js'
import { LayerTooLargeError, layerMinimumBytes, planSlicing, sliceBytes, type LayerChoice, type LayerInfo } from './slicing.js'
import { buildBudgetProgram, type BudgetProgram, type BuildInput } from './budget-program.js'
import { layerInfo } from './layer-options.js'
import { loadOverheadMs, loadTimes, opTimes, planSchedule, planTimes, type PlanProfile } from './plan-times.js'
import { pipelineEdges } from './pipeline-edges.js'
import { simulateGate } from './pipeline-sim.js'
import { choosePins } from './choose-pins.js'

export type { PlanProfile } from './plan-times.js'

export interface PlanPolicy {
  /** Preload weights ahead of their layer (default true; false: the seed's 'w/o preload'). */
  readonly preload: boolean
  /** Keep weights resident across inferences when the budget allows (default true). */
  readonly pin: boolean
  /** The static plan (default true; false: a dynamic first-fit allocator, the seed's 'w/o static plan'). */
  readonly staticPlan: boolean
  /** Allow weight and input slicing (default true; false: the On-Demand baseline's whole layers). */
  readonly slicing: boolean
  /** Try narrower weight windows with more pinned weights when reads bound a plan (default true). */
  readonly narrowWindows?: boolean
}

/** What a program build takes of the model (everything but the per-layer choices), and more. */
export interface BudgetModel extends Omit<BuildInput, 'choices'> {
  /** Activation bytes live at each layer's step, parallel to layers. */
  readonly live: readonly number[]
  /** Measured kernel times and read bandwidth (the package's device profile), when recorded. */
  readonly profile?: PlanProfile
}

export interface BudgetPlan {
  readonly budget: number
  readonly choices: readonly LayerChoice[]
  readonly build: BudgetProgram
  readonly plan: PreloadPlan
  /** Whether slicing ran for this plan (false: the previous slicing was re-planned). */
  readonly resliced: boolean
  /** The budget the slicing was chosen for (a later, larger budget slices again for latency). */
  readonly slicedFor: number
  /** Planning time (slicing + memory planning), ms. */
  readonly ms: number
}

const layerInfos = (m: BudgetModel, policy: PlanPolicy): LayerInfo[] =>
  m.layers.map((l, i) => {
    const info = layerInfo(l, m.live[i]!)
    if (policy.slicing) return info
    // Whole layers: the first (default) kernel, no weight slices, default input slices.
    const o = info.options[0]!
    return { ...info, options: [{ ...o, weightSliceable: false, maxInputSlices: o.defaultInputSlices }] }
  })

function build(m: BudgetModel, choices: readonly LayerChoice[]): BudgetProgram {
  return buildBudgetProgram({ graph: m.graph, inferred: m.inferred, layers: m.layers, choices, concats: m.concats, hostOutputs: m.hostOutputs, lookup: m.lookup, formShape: m.formShape, gemmNr: m.gemmNr })
}

/**
 * How planRegion finds the pin prefix: 'search' simulates 9 prefixes and the 2 beside the best,
 * 'estimate' plans only the analytic estimate (feasibility checks, and the kernel choice, which
 * planForBudget follows with one search).
 */
type PinSearch = 'search' | 'estimate'

/** The memory plan of a built program inside `region` bytes (throws PlanInfeasibleError). */
function planRegion(m: BudgetModel, b: BudgetProgram, choices: readonly LayerChoice[], region: number, policy: PlanPolicy, search: PinSearch = 'search'): PreloadPlan {
  if (!policy.staticPlan) {
    const plan = planOnDemandFirstFit(b.problem)
    if (plan.arenaBytes > region) throw new PlanInfeasibleError(-1, plan.arenaBytes, region)
    return plan
  }
  const planPinned = (maxPinSteps: number): PreloadPlan => planPreload(b.problem, { budget: region, preload: policy.preload, pin: policy.pin, maxPinSteps })
  if (!policy.pin) return planPinned(0)
  const estimate = pinStepsEstimate(m, b, choices, region)
  if (m.profile === undefined || search === 'estimate') return planPinned(estimate)
  const planner = pinPrefixPlanner(b.problem, { budget: region, preload: policy.preload, maxPinSteps: estimate })
  const ops = opTimes(m.layers, m.profile, b, choices)
  const profile = m.profile
  return choosePins(planner, (plan) => {
    const t = planTimes(profile, b, plan, ops)
    return { ms: t.makespanMs, reads: t.readMs }
  }, estimate)
}

/**
 * An analytic first guess at the pin prefix, from the device profile (choosePins refines it by
 * simulation; the minimum-budget search plans with it alone). Pinning saves reading those weights on
 * every inference but narrows the preload window, and while the pinned prefix computes the load queue
 * can only fill that window. Per pin prefix k (P pinned bytes, prefix compute time t, window w = region -
 * live activations - P, L = W - P bytes to load, bandwidth bw, total compute C):
 *     latency(k) ~ max(C, L / bw + max(0, t - w / bw))
 * and the k with the least estimate wins (ties: more pinning, fewer reads). Without a profile: no limit.
 */
function pinStepsEstimate(m: BudgetModel, b: BudgetProgram, choices: readonly LayerChoice[], region: number): number {
  const p = m.profile
  if (p === undefined) return Infinity
  const S = b.ops
  const opMs = opTimes(m.layers, p, b, choices)
  const weightByStep = new Float64Array(S + 1)
  let acts = 0
  const live = new Float64Array(S + 2)
  for (const t of b.problem.tensors) {
    const at = Math.max(0, t.first)
    if (t.kind === 'weight') weightByStep[at] = weightByStep[at]! + Math.ceil(t.bytes / 4096) * 4096
    else for (let k = Math.max(-1, t.first); k <= Math.min(S, t.last); k++) live[k + 1] = live[k + 1]! + t.bytes
  }
  for (const x of live) acts = Math.max(acts, x)
  const W = weightByStep.reduce((a, x) => a + x, 0)
  const C = opMs.reduce((a, x) => a + x, 0)
  const bw = p.bandwidth / 1e3 // bytes per ms
  let best = S
  let bestMs = Infinity
  let pinned = 0
  let prefix = 0
  for (let k = 0; k <= S; k++) {
    const window = Math.max(0, region - acts - pinned)
    if (window <= 0) break
    const io = (W - pinned) / bw + Math.max(0, prefix - window / bw)
    const est = Math.max(C, io)
    if (est <= bestMs) [best, bestMs] = [k, est]
    pinned += weightByStep[k]!
    prefix += opMs[k] ?? 0
  }
  return best
}

const defaultChoices = (m: BudgetModel, policy: PlanPolicy): LayerChoice[] =>
  layerInfos(m, policy).map((l) => ({ option: 0, weightSlices: 1, inputSlices: l.options[0]!.defaultInputSlices, bytes: 0 }))

/**
 * A budget in which the default kernels fit with every weight pinned: resident constants + all weights
 * + the activation plan (the 'unlimited' budget, as large as the model needs and no larger).
 */
export function unlimitedBudget(m: BudgetModel, policy: PlanPolicy): number {
  const b = build(m, defaultChoices(m, policy))
  const t = b.problem.tensors
  const weights = t.filter((x) => x.kind === 'weight')
  const weightBytes = weights.reduce((n, x) => n + Math.ceil(x.bytes / 4096) * 4096, 0)
  const acts = planMemory(t.filter((x) => x.kind !== 'weight').map((x) => ({ bytes: x.bytes, first: x.first, last: x.last }))).size
  let budget = b.residentBytes + weightBytes + Math.ceil(acts / 4096) * 4096 + (1 << 20)
  if (!policy.staticPlan || !policy.pin) return budget
  // The greedy placement may leave a weight unpinned at the exact sum: grow until every weight is pinned.
  const largest = weights.reduce((n, x) => Math.max(n, Math.ceil(x.bytes / 4096) * 4096), 0)
  for (let i = 0; i < 4; i++) {
    try {
      const plan = planPreload(b.problem, { budget: budget - b.residentBytes, preload: policy.preload, pin: true })
      if (plan.pinnedBytes >= weightBytes) return budget
    } catch (err) {
      if (!(err instanceof PlanInfeasibleError)) throw err
    }
    budget += Math.max(largest, 1 << 20)
  }
  return budget
}

/** The modelled makespan of one inference under a plan (needs the profile). */
function planMs(m: BudgetModel, plan: BudgetPlan): { ms: number; computeWaitMs: number } {
  const p = m.profile!
  const t = planTimes(p, plan.build, plan.plan, opTimes(m.layers, p, plan.build, plan.choices))
  return { ms: t.makespanMs, computeWaitMs: t.computeWaitMs }
}

/**
 * The number of leading moves (layer i to option k, in order) whose simulated makespan is least, on the
 * schedule of `first`: a moved layer's loads shrink by its leaner form's share and its ops take its new
 * kernel's time. The memory plan itself is not redone, so windows freed by the smaller forms are not
 * seen: an estimate that errs towards fewer moves.
 */
function fastestPrefix(m: BudgetModel, p: PlanProfile, first: BudgetPlan, moves: ReadonlyArray<{ layer: number; option: number }>): number {
  const b = first.build
  const s = planSchedule(b, first.plan)
  const ops = opTimes(m.layers, p, b, first.choices)
  const loads = loadTimes(p, s)
  const edges = pipelineEdges(s)
  const layerOf = new Map(m.layers.map((l, i) => [l.step.node.name, i]))
  const opsOf = new Map<number, number[]>()
  b.opNodes.forEach((node, k) => {
    const i = layerOf.get(node)
    if (i !== undefined) opsOf.set(i, [...(opsOf.get(i) ?? []), k])
  })
  const loadsOf = new Map<number, number[]>()
  s.loads.forEach((l, j) => {
    const i = layerOf.get(b.opNodes[l.step]!)
    if (i !== undefined) loadsOf.set(i, [...(loadsOf.get(i) ?? []), j])
  })
  const current = first.choices.map((c) => c.option)
  let best = simulateGate(s, ops, loads, edges).makespanMs
  let bestN = 0
  moves.forEach((mv, n) => {
    const options = m.layers[mv.layer]!.options
    const from = options[current[mv.layer]!]!
    const to = options[mv.option]!
    const dms = (p.ms(mv.layer, to.kernel) ?? 0) - (p.ms(mv.layer, from.kernel) ?? 0)
    const layerOps = opsOf.get(mv.layer) ?? []
    for (const k of layerOps) ops[k] = ops[k]! + dms / layerOps.length
    const share = (to.sliced?.weight.bytes ?? 0) / (from.sliced?.weight.bytes ?? 1)
    for (const j of loadsOf.get(mv.layer) ?? []) loads[j] = (loads[j]! - loadOverheadMs) * share + loadOverheadMs
    current[mv.layer] = mv.option
    const ms = simulateGate(s, ops, loads, edges).makespanMs
    if (ms < best) [best, bestN] = [ms, n + 1]
  })
  return bestN
}

/**
 * IO-aware kernel choice (beyond the seed, which chooses kernels for memory only): when the compute of a
 * plan waits for its reads, move layers to kernels that read smaller weight forms (im2col's raw filters
 * instead of Winograd's 16/9 or 64/9 larger transformed ones), cheapest extra compute per saved read
 * time first. How many layers move is chosen by simulating the pipeline (fastestPrefix), and that plan
 * is re-sliced and re-planned (slicing and pinning change with the leaner forms) and kept if its own
 * simulation is faster. A plan whose compute already never waits is kept as it is. Needs the device
 * profile.
 */
function balanceIo(m: BudgetModel, budget: number, policy: PlanPolicy, first: BudgetPlan, t0: number): BudgetPlan {
  const p = m.profile
  if (p === undefined) return first
  const firstMs = planMs(m, first)
  if (firstMs.computeWaitMs <= 0.01 * firstMs.ms) return first
  const perMs = p.bandwidth / 1e3
  // Per layer, its steps to ever leaner forms; a step's ratio is extra ms per ms of reading saved, made
  // non-decreasing along a layer so that sorting keeps each layer's steps in order.
  const moves: Array<{ layer: number; option: number; ratio: number }> = []
  first.choices.forEach((c, i) => {
    const options = m.layers[i]!.options
    let ms = p.ms(i, options[c.option]!.kernel)
    let bytes = options[c.option]!.sliced?.weight.bytes
    if (ms === undefined || bytes === undefined) return
    let ratio = -Infinity
    for (let k = c.option + 1; k < options.length; k++) {
      const o = options[k]!
      const other = p.ms(i, o.kernel)
      const leaner = o.sliced?.weight.bytes
      if (other === undefined || leaner === undefined || leaner >= bytes) continue
      ratio = Math.max(ratio, (other - ms) / ((bytes - leaner) / perMs))
      moves.push({ layer: i, option: k, ratio })
      ms = other
      bytes = leaner
    }
  })
  if (moves.length === 0) return first
  moves.sort((a, b) => a.ratio - b.ratio)
  // How many moves: each prefix of the move list simulated on the first plan's schedule, its loads of the
  // moved layers shrunk to the leaner forms and its ops slowed to their kernels' times (cheap: no
  // re-planning; a re-sliced plan per prefix grew the heap that the budget covers by 17 MB on
  // ResNet-152). The prefix that simulates fastest is then planned for real and kept if it is faster.
  const n = fastestPrefix(m, p, first, moves)
  if (n === 0) return first
  const option = new Map<number, number>()
  for (const mv of moves.slice(0, n)) option.set(mv.layer, mv.option)
  const lean = { ...m, layers: m.layers.map((l, i) => (option.has(i) ? { ...l, options: l.options.slice(option.get(i)) } : l)) }
  let again: BudgetPlan
  try {
    again = sliceAndPlan(lean, budget, policy, t0, 'estimate')
  } catch (err) {
    if (err instanceof MemoryBudgetError) return first
    throw err
  }
  // Choices index the trimmed option lists; map them back to the model's own option indices.
  const moved = { ...again, choices: again.choices.map((c, i) => ({ ...c, option: c.option + (option.get(i) ?? 0) })) }
  if (planMs(m, moved).ms >= firstMs.ms) return first
  return { ...moved, ms: performance.now() - t0 }
}

/** The shares of the planned region tried as weight windows when a plan waits for its reads. */
export const windowShares = [1 / 2, 1 / 4, 1 / 8, 1 / 16] as const

/**
 * A narrower-window plan replaces the first only below this share of its simulated time: the simulation
 * overrates small gains from it. VGG-19, 2 threads, both plans alternated in one process (*ad hoc*):
 * simulated 0.90x at 311 MB measured 1.15x; simulated 0.73x, 0.68x, 0.54x and 0.41x at 350, 400, 486
 * and 650 MB measured 0.80x, 0.69x, 0.57x and 0.42x.
 */
export const narrowerWindowGain = 0.8

/**
 * Bytes a quarter-region window must free before the planner tries narrower windows at all: more than
 * the heap the extra plans grow (MobileNetV2 at its 14.2 MB minimum, where a window frees under 4 MB,
 * peaked at 18.3 MB with the candidates planned against 11.0 MB before; `bench:memory` full runs).
 */
export const narrowerWindowMinFreed = 8 << 20

/**
 * Weight windows and pins chosen together (beyond the seed): the seed cuts each weight into the fewest
 * slices that fit the budget, so a weight larger than the budget streams through a window of most of
 * it (VGG-19's 411 MB fc6 in two 206 MB slices at a 311 MB budget) and little is left to pin; every
 * inference then reads nearly all the weights. When `first` waits for its reads, this plans again with
 * each weight sliced to at most a share of the planned region (windowShares), which frees room for
 * pinned weights, and returns the plan whose simulated inference is fastest, if faster than `first`
 * (with the analytic pin prefix, as `first`). Needs the device profile. `first`'s widest window must
 * exceed a quarter of the region by a tenth of its reads and by narrowerWindowMinFreed.
 */
function narrowerWindows(m: BudgetModel, budget: number, policy: PlanPolicy, first: BudgetPlan, t0: number): BudgetPlan | undefined {
  const firstMs = planMs(m, first)
  if (firstMs.computeWaitMs <= 0.05 * firstMs.ms) return undefined
  // Worth planning again only when a narrower window could free a tenth of what an inference reads:
  // each candidate grows the heap that the budget covers (four of them on ResNet-152 at 28 MB, where a
  // window frees 3 MB of 240 MB of reads, took its peak from 28.3 to 48.9 MB).
  const region = budget - first.build.residentBytes
  let widest = 0
  first.choices.forEach((c, i) => {
    const sliced = m.layers[i]!.options[c.option]!.sliced
    if (sliced !== undefined) widest = Math.max(widest, sliceBytes(sliced.weight, c.weightSlices))
  })
  const reads = planSchedule(first.build, first.plan).loads.reduce((n, l) => n + (l.bytes ?? 0), 0)
  const freed = widest - region * windowShares[1]
  if (freed < 0.1 * reads || freed < narrowerWindowMinFreed) return undefined
  // Nor when no pinning could cut the reads enough to pass the gain asked of a candidate: the candidates'
  // heap is then spent for nothing (VGG-19 at 100 MB, four candidates: peaks of 111.7 and 112.9 MB
  // against 98.3 MB without them, bench:memory on 590e821).
  if (unavoidableReads(m, region) > narrowerWindowGain * reads) return undefined
  let best: BudgetPlan | undefined
  let bestMs = firstMs.ms
  for (const share of windowShares) {
    if (widest <= region * share) continue // the same slicing as `first`
    let plan: BudgetPlan
    try {
      plan = balanceIo(m, budget, policy, sliceAndPlan(m, budget, policy, t0, 'estimate', Math.floor(region * share)), t0)
    } catch (err) {
      if (err instanceof MemoryBudgetError) continue
      throw err
    }
    const ms = planMs(m, plan).ms
    if (ms < bestMs) [best, bestMs] = [plan, ms]
  }
  return best
}

/**
 * Bytes every plan in a planned region of `region` bytes reads per inference at least: each layer's
 * large weights in their smallest stored form, less what the region can pin beside the model's peak
 * activations (a pinned weight holds its bytes through that step too).
 */
export function unavoidableReads(m: BudgetModel, region: number): number {
  let weights = 0
  for (const l of m.layers) {
    let least = Infinity
    for (const o of l.options) least = Math.min(least, (o.sliced?.weight.bytes ?? 0) + o.fixedBytes)
    if (Number.isFinite(least)) weights += least
  }
  let peak = 0
  for (const b of m.live) peak = Math.max(peak, b)
  return Math.max(0, weights - Math.max(0, region - peak))
}

/** Plans for `budget`; with `previous`, tries its slicing first. Throws MemoryBudgetError. */
export function planForBudget(m: BudgetModel, budget: number, policy: PlanPolicy, previous?: BudgetPlan): BudgetPlan {
  const t0 = performance.now()
  // The seed keeps a slicing while it fits; we keep it only while the budget does not grow past the one
  // it was made for, so a budget that comes back up gets the faster kernels and fewer slices again.
  if (previous !== undefined && budget <= previous.slicedFor) {
    try {
      const plan = planRegion(m, previous.build, previous.choices, budget - previous.build.residentBytes, policy)
      return { budget, choices: previous.choices, build: previous.build, plan, resliced: false, slicedFor: previous.slicedFor, ms: performance.now() - t0 }
    } catch (err) {
      if (!(err instanceof PlanInfeasibleError)) throw err
    }
  }
  // Kernels first, with the analytic pin prefix, then the pin prefix of the chosen program by simulation:
  // one prefix search per plan keeps the heap that planning grows (which the budget covers) small.
  const chosen = balanceIo(m, budget, policy, sliceAndPlan(m, budget, policy, t0, 'estimate'), t0)
  if (m.profile === undefined || !policy.pin || !policy.staticPlan) return chosen
  const searched = (p: BudgetPlan): BudgetPlan => ({ ...p, plan: planRegion(m, p.build, p.choices, budget - p.build.residentBytes, policy, 'search') })
  const first = searched(chosen)
  const narrower = policy.narrowWindows === false ? undefined : narrowerWindows(m, budget, policy, chosen, t0)
  if (narrower !== undefined) {
    const alternative = searched(narrower)
    if (planMs(m, alternative).ms < narrowerWindowGain * planMs(m, first).ms) return { ...alternative, ms: performance.now() - t0 }
  }
  return { ...first, ms: performance.now() - t0 }
}

/** Slicing for a per-layer limit, then the memory plan; the limit tightens while the plan fails. */
function sliceAndPlan(m: BudgetModel, budget: number, policy: PlanPolicy, t0: number, search: PinSearch = 'search', window = Infinity): BudgetPlan {
  const infos = layerInfos(m, policy)
  let resident = build(m, defaultChoices(m, policy)).residentBytes
  let limit = budget - resident
  let last: unknown
  for (let attempt = 0; attempt < 12 && limit > 0; attempt++) {
    let choices: LayerChoice[]
    try {
      choices = planSlicing(infos, limit, window)
    } catch (err) {
      if (err instanceof LayerTooLargeError) {
        last = err
        break
      }
      throw err
    }
    const b = build(m, choices)
    resident = b.residentBytes
    try {
      const plan = planRegion(m, b, choices, budget - resident, policy, search)
      return { budget, choices, build: b, plan, resliced: true, slicedFor: budget, ms: performance.now() - t0 }
    } catch (err) {
      if (!(err instanceof PlanInfeasibleError)) throw err
      last = err
      limit = Math.floor(limit * 0.85)
    }
  }
  const why = last instanceof Error ? ` (${last.message})` : ''
  throw new MemoryBudgetError(`a memory budget of ${budget} bytes is too small for this model${why}`)
}

/** Whether `budget` plans (slicing and memory plan; what minimumBudget searches with). */
export function budgetPlans(m: BudgetModel, budget: number, policy: PlanPolicy): boolean {
  try {
    sliceAndPlan(m, budget, policy, performance.now(), 'estimate')
    return true
  } catch (err) {
    if (err instanceof MemoryBudgetError) return false
    throw err
  }
}

/** The smallest budget (a multiple of 64 KiB) that plans: binary search between the layer bound and the unlimited budget. */
export function minimumBudget(m: BudgetModel, policy: PlanPolicy): number {
  const step = 64 * 1024
  const infos = layerInfos(m, policy)
  const resident = build(m, defaultChoices(m, policy)).residentBytes
  let lo = Math.floor((resident + Math.max(0, ...infos.map(layerMinimumBytes))) / step) // does not plan (or barely)
  let hi = Math.ceil(unlimitedBudget(m, policy) / step)
  if (!budgetPlans(m, hi * step, policy)) {
    throw new MemoryBudgetError(`this model does not plan even with ${hi * step} bytes (every weight resident); re-run flexpipe prepare`)
  }
  if (budgetPlans(m, lo * step, policy)) return lo * step
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if (budgetPlans(m, mid * step, policy)) hi = mid
    else lo = mid
  }
  return hi * step
}
