// SPDX-License-Identifier: Apache-2.0
// A preload-planning problem checked and turned into flat arrays: padded sizes, per-step lists, live bytes.
import { ArgumentError } from '../../errors.js'
import { alignUp } from '../../align.js'
import type { PreloadProblem, PlanTensor } from './preload-types.js'

/** Weights are read with O_DIRECT from 4096-padded blobs: offsets and sizes are multiples of this. */
export const weightAlignment = 4096
export const defaultAlignment = 64

export const kindWeight = 0
export const kindActivation = 1
export const kindIntermediate = 2

export interface Prepared {
  readonly steps: number
  readonly count: number
  readonly kind: Uint8Array
  /** Bytes each tensor occupies: weights padded to 4096, the others to the alignment. */
  readonly size: Float64Array
  readonly first: Int32Array
  readonly last: Int32Array
  readonly alignment: number
  /** Weights by first step (index = step), largest first. */
  readonly weightsAt: readonly (readonly number[])[]
  /** Intermediates by first step (index = step), largest first. */
  readonly intermediatesAt: readonly (readonly number[])[]
  /** Activations in planning order: by first step, then largest first, then problem order. */
  readonly activations: readonly number[]
  /** Bytes live at each step without preload or pinning; index = step + 1 (steps -1 .. steps). */
  readonly live: Float64Array
  /** Padded bytes of all tensors (an arena this large holds every tensor without reuse). */
  readonly total: number
}

const kindCodes = { weight: kindWeight, activation: kindActivation, intermediate: kindIntermediate } as const

function checkTensor(t: PlanTensor, i: number, steps: number): void {
  const at = `tensors[${i}]${t.name ? ` ('${t.name}')` : ''}`
  if (!(t.kind in kindCodes)) throw new ArgumentError(`${at}.kind: expected weight, activation or intermediate, got ${String(t.kind)}`)
  if (!Number.isSafeInteger(t.bytes) || t.bytes < 0) throw new ArgumentError(`${at}.bytes: expected integer >= 0, got ${t.bytes}`)
  const lo = t.kind === 'activation' ? -1 : 0
  const hi = t.kind === 'activation' ? steps : steps - 1
  if (!Number.isInteger(t.first) || t.first < lo || t.first > hi)
    throw new ArgumentError(`${at}.first: expected integer ${lo}..${hi} for ${t.kind === 'activation' ? 'an' : 'a'} ${t.kind}, got ${t.first}`)
  if (!Number.isInteger(t.last) || t.last < t.first || t.last > hi)
    throw new ArgumentError(`${at}.last: expected integer ${t.first}..${hi} for ${t.kind === 'activation' ? 'an' : 'a'} ${t.kind}, got ${t.last}`)
}

export function checkAlignment(alignment: number): void {
  if (!Number.isSafeInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0 || alignment > weightAlignment)
    throw new ArgumentError(`alignment: expected a power of two 1..${weightAlignment}, got ${alignment}`)
}

/** Bytes live at each step when every tensor occupies exactly [first, last]; index = step + 1. */
function liveBytes(steps: number, size: Float64Array, first: Int32Array, last: Int32Array): Float64Array {
  const delta = new Float64Array(steps + 3)
  for (let i = 0; i < size.length; i++) {
    delta[first[i]! + 1] = delta[first[i]! + 1]! + size[i]!
    delta[last[i]! + 2] = delta[last[i]! + 2]! - size[i]!
  }
  const live = new Float64Array(steps + 2)
  let run = 0
  for (let s = 0; s < live.length; s++) live[s] = run += delta[s]!
  return live
}

const bySizeThenIndex =
  (size: Float64Array) =>
  (a: number, b: number): number =>
    size[b]! - size[a]! || a - b

export function prepare(problem: PreloadProblem, alignment = defaultAlignment): Prepared {
  const steps = problem.steps
  if (!Number.isSafeInteger(steps) || steps < 0) throw new ArgumentError(`steps: expected integer >= 0, got ${steps}`)
  checkAlignment(alignment)
  const n = problem.tensors.length
  const kind = new Uint8Array(n)
  const size = new Float64Array(n)
  const first = new Int32Array(n)
  const last = new Int32Array(n)
  const weightsAt: number[][] = Array.from({ length: steps }, () => [])
  const intermediatesAt: number[][] = Array.from({ length: steps }, () => [])
  const activations: number[] = []
  let total = 0
  problem.tensors.forEach((t, i) => {
    checkTensor(t, i, steps)
    kind[i] = kindCodes[t.kind]
    size[i] = alignUp(t.bytes, t.kind === 'weight' ? weightAlignment : alignment)
    first[i] = t.first
    last[i] = t.last
    total += size[i]!
    if (t.kind === 'weight') weightsAt[t.first]!.push(i)
    else if (t.kind === 'intermediate') intermediatesAt[t.first]!.push(i)
    else activations.push(i)
  })
  const bySize = bySizeThenIndex(size)
  for (const list of [...weightsAt, ...intermediatesAt]) list.sort(bySize)
  activations.sort((a, b) => first[a]! - first[b]! || bySize(a, b))
  const live = liveBytes(steps, size, first, last)
  return { steps, count: n, kind, size, first, last, alignment, weightsAt, intermediatesAt, activations, live, total }
}

/** The step with the most live bytes in [from, to] (ties: the earliest). */
export function busiestStep(prep: Prepared, from: number, to: number): number {
  let best = from
  for (let s = from; s <= to; s++) if (prep.live[s + 1]! > prep.live[best + 1]!) best = s
  return best
}
