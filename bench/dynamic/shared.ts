// SPDX-License-Identifier: Apache-2.0
// What dynamic.bench.ts and its child (dynamic-child.ts) share: the jobs and answers, the BERT inputs
// (seeded, as bench/models/cases.ts's bertFeeds makes them) and the process's memory figures. Only node:
// modules here: the child imports this before either engine, so an idle child holds neither.
import { readFileSync } from 'node:fs'

/** The model's two inputs, int64 [batch, seq_len]. */
export const inputNames = ['input_ids', 'attention_mask'] as const
/** bench/models/cases.ts's BERT case draws its ids with this seed. */
export const idSeed = 4

export type EngineName = 'flexpipe' | 'ort'

interface JobBase {
  readonly engine: EngineName
  readonly model: string
  readonly threads: number
  /** flexpipe's open() dims (e.g. { batch: [1, 1], seq_len: [1, 128] }); undefined: none. */
  readonly dims?: Readonly<Record<string, readonly [number, number]>>
  /** onnxruntime-node's session options (bench/models' ortOptions plus the spinning setting). */
  readonly ortOptions?: Record<string, unknown>
}

/**
 * Per length, in the given order: unless `newShapes` is false, two calls at `warm` (a shape of the
 * length's bucket that is not among the lengths), one timed call at the length (never seen before in
 * this process), one call at `warm`, one timed call at the length again (seen, but not the last shape);
 * then `warmup` untimed and `runs` timed calls back to back at the length.
 * `padded`: afterwards `warmup` + `runs` calls at seq `maxLen` holding the first `padded.realLength`
 * tokens and mask zero beyond.
 */
export interface LengthsJob extends JobBase {
  readonly job: 'lengths'
  readonly lengths: readonly number[]
  /** Per length: the shape that warms its bucket first, or null (none that is not itself timed). */
  readonly warm: ReadonlyArray<number | null>
  readonly newShapes: boolean
  readonly runs: number
  readonly warmup: number
  readonly maxLen: number
  readonly padded?: { readonly realLength: number }
}

/**
 * flexpipe only: BucketPlans.planFor timed alone on each shape of `shapes` (all new to the process); for a
 * shape of a bucket without a template, Engine's own planFor (which then plans the shape by itself).
 */
export interface PlanForJob extends JobBase {
  readonly job: 'planfor'
  readonly shapes: readonly number[]
}

/** `calls` calls at seq_len uniform in [min, max] (randomLengths(seed)), memory every `every` calls. */
export interface RandomJob extends JobBase {
  readonly job: 'random'
  readonly calls: number
  readonly seed: number
  readonly min: number
  readonly max: number
  readonly every: number
}

export type Job = LengthsJob | PlanForJob | RandomJob

/** A few output values: last_hidden_state's first 8 features at token 0 and at the last real token, pooler_output's first 8. */
export type Probe = number[]

export interface LengthResult {
  readonly length: number
  readonly warm: number | null
  /** The first call at this length (new shape; in flexpipe, of an already planned bucket). */
  readonly firstNewMs?: number
  /** The first call at this length after a call at another shape (seen shape, not the last one). */
  readonly firstRepeatMs?: number
  readonly samplesMs: number[]
  readonly probe: Probe
}

export interface Memory {
  /** VmRSS, VmHWM, RssAnon, RssFile of /proc/self/status, bytes. */
  readonly rss: number
  readonly hwm: number
  readonly anon: number
  readonly file: number
}

/**
 * How flexpipe found a shape's plan: through its bucket's template (BucketPlans.planFor), or planned on
 * its own because the bucket has no template (Engine's planFor falls back to a plan per shape).
 */
export type PlanPath = 'template' | 'planned'

/** A shape bucket of the engine (from Engine's private BucketPlans): key, whether it has a template, and why not. */
export interface BucketInfo {
  readonly key: string
  readonly templated: boolean
  readonly reason?: string
}

export interface LengthsResult {
  readonly ok: true
  readonly job: 'lengths'
  readonly openMs: number
  readonly lengths: LengthResult[]
  readonly padded?: { readonly realLength: number; readonly samplesMs: number[]; readonly probe: Probe }
  readonly stats?: unknown
  readonly buckets?: BucketInfo[]
  readonly memory: Memory
}

export interface PlanForResult {
  readonly ok: true
  readonly job: 'planfor'
  readonly openMs: number
  /** Per shape, in order: planFor on it the first time, right after on it again, then on the shape before it. */
  readonly shapes: ReadonlyArray<{ readonly length: number; readonly path: PlanPath; readonly freshMs: number; readonly sameMs: number; readonly otherMs?: number }>
  /** planFor on each shape the first time on a second engine of the process (the path's code compiled). */
  readonly warmFreshMs: readonly number[]
  readonly buckets: BucketInfo[]
  readonly statsBefore: unknown
  readonly statsAfter: unknown
}

export interface RandomResult {
  readonly ok: true
  readonly job: 'random'
  /** Before the model opened: node, and the engine's module (flexpipe: its addon) loaded. */
  readonly idle: Memory
  readonly opened: Memory
  readonly openMs: number
  /** After every `every` calls (and at 0: after open, before any call). */
  readonly points: ReadonlyArray<{ readonly calls: number } & Memory>
  readonly callMs: { readonly median: number; readonly p90: number; readonly mean: number }
  readonly seconds: number
  readonly stats?: unknown
}

export type ChildResult = LengthsResult | PlanForResult | RandomResult | { readonly ok: false; readonly error: string }

import { seeded } from '../seeded.js'

export { seeded }

/**
 * Token ids [CLS] then seeded ids in 1..30521, as bertFeeds(seq, 4) draws them: the ids of a length are the
 * first of these, so one array of `maxLen` serves every length (as a prefix).
 */
export function bertIds(maxLen: number, seed = idSeed): BigInt64Array {
  const rand = seeded(seed)
  const d = new BigInt64Array(maxLen)
  d[0] = 101n
  for (let i = 1; i < maxLen; i++) d[i] = BigInt(1 + Math.floor(rand() * 30521))
  return d
}

/** The random run's lengths: uniform integers in [min, max], seeded. */
export function randomLengths(seed: number, n: number, min: number, max: number): number[] {
  const rand = seeded(seed)
  return Array.from({ length: n }, () => min + Math.floor(rand() * (max - min + 1)))
}

/** This process's VmRSS, VmHWM, RssAnon and RssFile (bytes). */
export function memory(): Memory {
  const s = readFileSync('/proc/self/status', 'utf8')
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') }
}

export function medianOf(xs: readonly number[]): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = (s.length - 1) / 2
  return (s[Math.floor(m)]! + s[Math.ceil(m)]!) / 2
}
