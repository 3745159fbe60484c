// SPDX-License-Identifier: Apache-2.0
// Preload-planning test support: a seeded PRNG, random and CNN-shaped problems, plan checkers and a
// simulator of the load and compute queues.
import type { PlanTensor, PreloadPlan, PreloadProblem } from '../../lib/plan/memory/preload-plan.js'

import { seededRandom } from '../../lib/cli/inputs.js'

/** mulberry32: a small seeded PRNG returning floats in [0, 1) (the one `flexpipe run --random` uses). */
export const prng = seededRandom

const int = (rand: () => number, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))
/** Log-uniform sizes, so small and large tensors both appear. */
const bytes = (rand: () => number, max: number): number => (rand() < 0.05 ? 0 : Math.floor(Math.exp(rand() * Math.log(max))))

/**
 * A random problem: chains (an activation read by the next step) mixed with DAG-like skips (read
 * many steps later), shared weights read by several steps, zero-size tensors and graph outputs.
 */
export function randomProblem(seed: number): PreloadProblem {
  const rand = prng(seed)
  const steps = int(rand, 1, 30)
  const tensors: PlanTensor[] = []
  const lastFrom = (s: number): number => {
    const r = rand()
    if (r < 0.6) return Math.min(s + 1, steps)
    if (r < 0.9) return Math.min(s + int(rand, 1, 8), steps)
    return steps
  }
  for (let k = int(rand, 1, 2); k > 0; k--) tensors.push({ kind: 'activation', bytes: bytes(rand, 200_000), first: -1, last: int(rand, 0, steps) })
  for (let s = 0; s < steps; s++) {
    for (let k = int(rand, 0, 2); k > 0; k--) {
      const last = rand() < 0.8 ? s : Math.min(steps - 1, s + int(rand, 1, 5))
      tensors.push({ kind: 'weight', bytes: bytes(rand, 400_000), first: s, last })
    }
    for (let k = int(rand, 0, 2); k > 0; k--) tensors.push({ kind: 'activation', bytes: bytes(rand, 200_000), first: s, last: lastFrom(s) })
    for (let k = int(rand, 0, 1); k > 0; k--) tensors.push({ kind: 'intermediate', bytes: bytes(rand, 150_000), first: s, last: s })
  }
  return { steps, tensors }
}

/**
 * A CNN-shaped problem (ResNet-like): per step one conv weight, one output activation read by the
 * next step (ping-pong), a workspace, and every third step a residual activation kept three steps.
 * Activations shrink and weights grow with depth, as in real CNNs.
 */
export function cnnProblem(steps: number, seed = 1): PreloadProblem {
  const rand = prng(seed)
  const tensors: PlanTensor[] = [{ kind: 'activation', bytes: 600_000, first: -1, last: 0, name: 'input' }]
  for (let s = 0; s < steps; s++) {
    const depth = s / steps
    const act = Math.floor(3_200_000 * (1 - 0.85 * depth))
    const weight = Math.floor((20_000 + 900_000 * depth) * (0.5 + rand()))
    const residual = s % 3 === 0 && s + 3 < steps
    const last = s === steps - 1 ? steps : residual ? s + 3 : s + 1
    tensors.push({ kind: 'weight', bytes: weight, first: s, last: s, name: `w${s}` })
    tensors.push({ kind: 'activation', bytes: act, first: s, last, name: `a${s}` })
    tensors.push({ kind: 'intermediate', bytes: Math.floor(act * (0.5 + rand())), first: s, last: s, name: `ws${s}` })
  }
  return { steps, tensors }
}

/** Padded sizes as the planner uses them. */
function paddedSize(t: PlanTensor, alignment: number): number {
  const a = t.kind === 'weight' ? 4096 : alignment
  return Math.ceil(t.bytes / a) * a
}

/** The steps a tensor occupies its bytes under a plan (pinned weights: always). */
function occupied(p: PreloadProblem, plan: PreloadPlan, i: number): [number, number] {
  const pl = plan.placements[i]!
  return pl.pinned ? [-Infinity, Infinity] : [pl.allocStep, p.tensors[i]!.last]
}

/** Violations of the static plan invariants (empty when the plan is valid). */
export function staticViolations(p: PreloadProblem, plan: PreloadPlan, budget: number, alignment = 64): string[] {
  const out: string[] = []
  if (plan.arenaBytes > budget) out.push(`arenaBytes ${plan.arenaBytes} > budget ${budget}`)
  p.tensors.forEach((t, i) => {
    const pl = plan.placements[i]!
    const a = t.kind === 'weight' ? 4096 : alignment
    if (pl.offset < 0 || pl.offset % a !== 0) out.push(`tensor ${i}: offset ${pl.offset} not >= 0 and ${a}-aligned`)
    if (pl.size !== paddedSize(t, alignment)) out.push(`tensor ${i}: size ${pl.size} is not ${t.bytes} padded to ${a}`)
    if (pl.size > 0 && pl.offset + pl.size > plan.arenaBytes) out.push(`tensor ${i}: ends past arenaBytes`)
    if (t.kind !== 'weight' && (pl.allocStep !== t.first || pl.pinned)) out.push(`tensor ${i}: ${t.kind} allocStep ${pl.allocStep} != first ${t.first}`)
    if (t.kind === 'weight' && (pl.allocStep > t.first || pl.allocStep < 0)) out.push(`tensor ${i}: weight allocStep ${pl.allocStep} outside 0..${t.first}`)
    if (pl.pinned && pl.allocStep !== 0) out.push(`tensor ${i}: pinned with allocStep ${pl.allocStep}`)
    const la = plan.loadAfter[i]!
    if ((t.kind !== 'weight' || pl.pinned) && la !== -1) out.push(`tensor ${i}: loadAfter ${la} for a tensor that is not loaded`)
    if (t.kind === 'weight' && la >= pl.allocStep) out.push(`tensor ${i}: loadAfter ${la} >= allocStep ${pl.allocStep}`)
  })
  for (let i = 0; i < p.tensors.length; i++) {
    const a = plan.placements[i]!
    const [af, at] = occupied(p, plan, i)
    for (let j = i + 1; j < p.tensors.length; j++) {
      const b = plan.placements[j]!
      if (a.size === 0 || b.size === 0 || a.offset >= b.offset + b.size || b.offset >= a.offset + a.size) continue
      const [bf, bt] = occupied(p, plan, j)
      if (af <= bt && bf <= at) out.push(`tensors ${i} and ${j} overlap at [${a.offset}, ${a.offset + a.size}) / [${b.offset}, ${b.offset + b.size}) while both occupied`)
    }
  }
  return out
}

/** Checks that `order` lists each kind's tensors once, in the documented order. */
export function orderViolations(p: PreloadProblem, plan: PreloadPlan): string[] {
  const out: string[] = []
  for (const kind of ['weight', 'activation', 'intermediate'] as const) {
    const want = p.tensors.map((t, i) => [t, i] as const).filter(([t]) => t.kind === kind).map(([, i]) => i)
    const got = plan.order[kind]
    if ([...got].sort((a, b) => a - b).join() !== want.join()) out.push(`order.${kind} is not a permutation of the ${kind}s`)
    const key = (i: number): number[] =>
      kind === 'weight' ? [plan.placements[i]!.pinned ? 0 : 1, plan.placements[i]!.allocStep, p.tensors[i]!.first] : [p.tensors[i]!.first]
    for (let k = 1; k < got.length; k++) {
      const a = key(got[k - 1]!)
      const b = key(got[k]!)
      const cmp = a.findIndex((x, n) => x !== b[n]!)
      if (cmp >= 0 && a[cmp]! > b[cmp]!) out.push(`order.${kind}: ${got[k - 1]} before ${got[k]}`)
    }
  }
  return out
}

interface Sim {
  readonly p: PreloadProblem
  readonly plan: PreloadPlan
  readonly holding: Set<number>
  violation?: string
}

function overlap(plan: PreloadPlan, i: number, j: number): boolean {
  const a = plan.placements[i]!
  const b = plan.placements[j]!
  return a.size > 0 && b.size > 0 && a.offset < b.offset + b.size && b.offset < a.offset + a.size
}

/** Tensor `i` starts holding data (being written by a load or by compute): nothing it overlaps may hold data. */
function hold(sim: Sim, i: number, when: string): void {
  for (const j of sim.holding) {
    if (sim.violation === undefined && overlap(sim.plan, i, j)) sim.violation = `${when}: tensor ${i} is written over tensor ${j}, which is still live`
  }
  sim.holding.add(i)
}

/**
 * Runs the two queues of the seed's online execution in a random interleaving and returns the first
 * moment a tensor is written over bytes another tensor still holds (or a deadlock), else undefined.
 *   load queue: non-pinned weights in plan.order.weight; load j starts after the previous load
 *     started and after comp(loadAfter[j]) finished; a started load finishes at any later moment.
 *   compute queue: comp(i) starts after comp(i - 1) finished and every weight step i reads is loaded.
 * A weight holds its bytes from its load start, an activation from the start of the step that writes
 * it (graph inputs and pinned weights from the beginning), each until comp(last) finishes.
 */
export function simulateQueues(p: PreloadProblem, plan: PreloadPlan, rand: () => number): string | undefined {
  const S = p.steps
  const sim: Sim = { p, plan, holding: new Set() }
  const loads = plan.order.weight.filter((w) => !plan.placements[w]!.pinned)
  const loaded = new Set<number>()
  const inFlight: number[] = []
  const reads = Array.from({ length: S }, () => [] as number[])
  const writes = Array.from({ length: S + 1 }, () => [] as number[])
  const frees = Array.from({ length: S + 1 }, () => [] as number[])
  p.tensors.forEach((t, i) => {
    if (plan.placements[i]!.pinned || (t.kind === 'activation' && t.first < 0)) hold(sim, i, 'start')
    else if (t.kind !== 'weight') writes[t.first]!.push(i)
    if (t.kind === 'weight' && !plan.placements[i]!.pinned) for (let s = t.first; s <= t.last; s++) reads[s]!.push(i)
    if (!plan.placements[i]!.pinned && t.last < S) frees[t.last]!.push(i)
  })
  let nextLoad = 0
  let compDone = 0
  let running = false
  const bias = rand()
  while (sim.violation === undefined && (compDone < S || nextLoad < loads.length || inFlight.length > 0)) {
    const actions: (() => void)[] = []
    const canLoad = nextLoad < loads.length && plan.loadAfter[loads[nextLoad]!]! < compDone
    if (canLoad) actions.push(() => hold(sim, loads[nextLoad++]!, `load ${nextLoad - 1} (compDone=${compDone})`))
    if (inFlight.length > 0) actions.push(() => loaded.add(inFlight.splice(Math.floor(rand() * inFlight.length), 1)[0]!))
    if (running) {
      actions.push(() => {
        for (const i of frees[compDone]!) sim.holding.delete(i)
        compDone++
        running = false
      })
    } else if (compDone < S && reads[compDone]!.every((w) => loaded.has(w))) {
      actions.push(() => {
        running = true
        for (const i of writes[compDone]!) hold(sim, i, `comp ${compDone}`)
      })
    }
    if (actions.length === 0) return `deadlock with compDone=${compDone}, nextLoad=${nextLoad}/${loads.length}`
    // A per-run bias sweeps from load-eager to compute-eager schedules.
    const pick = canLoad && rand() < bias ? 0 : Math.floor(rand() * actions.length)
    const before = nextLoad
    actions[pick]!()
    if (nextLoad > before) inFlight.push(loads[before]!)
  }
  return sim.violation
}
