// SPDX-License-Identifier: Apache-2.0
// The elastic benchmark's options (argument or environment variable) and its latency targets.
import { isAbsolute, join } from 'node:path'
import { numberOption, option, repoRoot } from '../models/cases.js'
import type { IoMode } from './configs.js'

export interface BenchOptions {
  readonly threads: number
  readonly runs: number
  readonly warmup: number
  /** Named targets and/or milliseconds, in the order given. */
  readonly targets: readonly string[]
  readonly io: readonly IoMode[]
  /** Dev examples used (accuracy and shard importance); undefined = all. */
  readonly devLimit: number | undefined
  /** A Hugging Face model folder with dev.jsonl, or 'synthetic' (harness check, see synthetic-model.ts). */
  readonly model: string
  /** Sequence length of the plans; undefined = the tokenizer's max_length. */
  readonly seq: number | undefined
  readonly timeoutS: number
  /** Measure the device profiles again even when the package has them (e.g. after a noisy run). */
  readonly reprofile: boolean
}

/** T as a fraction of the full model's compute F = fixedMs + L * layerMs[M] on this machine. */
export const targetFactors: Readonly<Record<string, number>> = { tight: 0.55, medium: 0.8, loose: 1.2 }

function list(name: string, env: string, fallback: string): string[] {
  return (option(name, env) ?? fallback).split(',').map((s) => s.trim()).filter(Boolean)
}

function integer(name: string, env: string, fallback: number): number {
  const n = numberOption(name, env, fallback)
  if (!Number.isInteger(n)) throw new Error(`--${name} / ${env}: expected a positive integer, got ${n}`)
  return n
}

export function benchOptions(): BenchOptions {
  const targets = list('targets', 'FLEXPIPE_BENCH_TARGETS', 'tight,medium,loose')
  for (const t of targets) {
    if (!(t in targetFactors) && !(Number(t) > 0)) throw new Error(`--targets / FLEXPIPE_BENCH_TARGETS: expected tight, medium, loose or milliseconds, got '${t}'`)
  }
  const io = list('io', 'FLEXPIPE_BENCH_IO', 'cold,throttled')
  for (const m of io) if (m !== 'cold' && m !== 'throttled') throw new Error(`--io / FLEXPIPE_BENCH_IO: expected cold and/or throttled, got '${m}'`)
  const limit = option('dev-limit', 'FLEXPIPE_BENCH_DEV_LIMIT')
  const seq = option('seq', 'FLEXPIPE_BENCH_SEQ')
  const model = option('model', 'FLEXPIPE_BENCH_MODEL') ?? join('test', 'fixtures', 'spam-encoder')
  const runs = integer('runs', 'FLEXPIPE_BENCH_RUNS', 200)
  return {
    threads: integer('threads', 'FLEXPIPE_BENCH_THREADS', 2),
    runs,
    warmup: Number(option('warmup', 'FLEXPIPE_BENCH_WARMUP') ?? 2),
    targets,
    io: io as IoMode[],
    devLimit: limit === undefined ? undefined : integer('dev-limit', 'FLEXPIPE_BENCH_DEV_LIMIT', 1),
    model: model === 'synthetic' || isAbsolute(model) ? model : join(repoRoot, model),
    seq: seq === undefined ? undefined : integer('seq', 'FLEXPIPE_BENCH_SEQ', 1),
    timeoutS: numberOption('timeout', 'FLEXPIPE_BENCH_TIMEOUT_S', 600),
    reprofile: process.argv.includes('--reprofile') || process.env.FLEXPIPE_BENCH_REPROFILE === '1',
  }
}

export interface Target {
  readonly name: string
  readonly ms: number
  /** The fraction of F, for named targets. */
  readonly factor?: number
}

/** Resolves the named targets against F (ms); millisecond values pass through. */
export function resolveTargets(names: readonly string[], fullComputeMs: number): Target[] {
  return names.map((name) => {
    const factor = targetFactors[name]
    return factor === undefined ? { name: `${Number(name)}ms`, ms: Number(name) } : { name, ms: factor * fullComputeMs, factor }
  })
}

/** The target of the PreloadModel comparison: 'loose' when measured, else the largest. */
export function looseTarget(targets: readonly Target[]): Target | undefined {
  return targets.find((t) => t.name === 'loose') ?? [...targets].sort((a, b) => b.ms - a.ms)[0]
}
