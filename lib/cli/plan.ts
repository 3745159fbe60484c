// SPDX-License-Identifier: Apache-2.0
// `flexpipe plan`: opens a model as `run` does and shows the plan its engine applies: the memory layout
// as a picture (--svg, lib/plan/draw/plan-svg.ts) and one profiled inference as a trace (--trace,
// lib/runtime/run-trace.ts), on seeded random inputs (an elastic package: token ids spread over its
// vocabulary, the inputs whose embedding rows take the most pages).
import { writeFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { modelKind, open, openElastic, openPackage, type AnyEngine } from '../api/open.js'
import { ArgumentError, IOError } from '../errors.js'
import { tensor, type Tensor } from '../model/tensor.js'
import { planSvg, type PlanCaption } from '../plan/draw/plan-svg.js'
import type { ElasticEngine } from '../runtime/elastic-engine.js'
import { runTrace } from '../runtime/run-trace.js'
import type { ModelKind } from '../validate.js'
import { buildFeeds } from './inputs.js'
import { formatMB } from './sizes.js'

export interface PlanOptions {
  /** Where to write the memory layout picture. */
  readonly svg?: string
  /** Where to write the trace of one inference. */
  readonly trace?: string
  readonly dims: readonly string[]
  readonly threads?: number
  /** Memory budget in bytes (memory-budget packages). */
  readonly budget?: number
  /** Read bandwidth throttle in bytes/s (packages). */
  readonly bandwidth?: number
  /** Target latency, preload buffer and buffered reads (elastic packages). */
  readonly targetMs?: number
  readonly preloadBytes?: number
  readonly buffered?: boolean
}

export async function runPlan(model: string, o: PlanOptions): Promise<void> {
  if (o.svg === undefined && o.trace === undefined) throw new ArgumentError('plan: give --svg out.svg (the memory layout) and/or --trace out.json (one traced inference)')
  const kind = await modelKind(model)
  checkOptionsFor(kind, model, o)
  const engine = await openFor(kind, model, o)
  try {
    const feeds = engine.kind === 'elastic' ? elasticFeeds(engine) : await buildFeeds(engine, [], true, [...o.dims])
    if (o.svg !== undefined) {
      const plan = await engine.executionPlan(feeds)
      await write(o.svg, planSvg(plan, caption(engine, model, o.budget)))
      console.log(`${o.svg}: ${plan.buffers.length} buffers over ${plan.opNodes.length} ops in a ${formatMB(plan.arenaBytes)} arena`)
    }
    if (o.trace !== undefined) {
      const { run } = await engine.inferTraced(feeds)
      const trace = runTrace(run.plan, run.report, basename(model))
      await write(o.trace, JSON.stringify(trace))
      console.log(`${o.trace}: ${run.plan.opNodes.length} ops, ${trace.otherData.loads} loads; open it in https://ui.perfetto.dev`)
    }
  } finally {
    await engine.close()
  }
}

/** Options that do not apply to the file are errors naming what would apply. */
function checkOptionsFor(kind: ModelKind, model: string, o: PlanOptions): void {
  const elasticOnly = o.targetMs !== undefined || o.preloadBytes !== undefined || o.buffered === true
  if (kind === 'onnx' && (o.budget !== undefined || o.bandwidth !== undefined || elasticOnly)) {
    throw new ArgumentError(`--budget, --bandwidth, --target-ms, --preload and --buffered need a package: run \`flexpipe prepare ${model} -o model.fpk\` (or prepare --elastic) first`)
  }
  if (kind === 'budget' && elasticOnly) throw new ArgumentError(`--target-ms, --preload and --buffered need an elastic package; ${model} is a memory-budget package (give --budget)`)
  if (kind === 'elastic' && o.budget !== undefined) throw new ArgumentError(`--budget: ${model} is an elastic package; give --target-ms (and --preload) instead`)
  if (kind === 'elastic' && o.dims.some((d) => !d.startsWith('sequence='))) throw new ArgumentError(`--dim: an elastic package takes only --dim sequence=N (the sequence length it plans for)`)
}

function openFor(kind: ModelKind, model: string, o: PlanOptions): Promise<AnyEngine> {
  const threads = o.threads === undefined ? {} : { threads: o.threads }
  const bandwidth = o.bandwidth === undefined ? {} : { bandwidth: o.bandwidth }
  if (kind === 'budget') return openPackage(model, { ...threads, ...(o.budget === undefined ? {} : { memoryBudget: o.budget }), ...(o.bandwidth === undefined ? {} : { ioBandwidth: o.bandwidth }) })
  if (kind === 'elastic') {
    const seq = o.dims.length === 0 ? {} : { seq: Number(o.dims[o.dims.length - 1]!.slice('sequence='.length)) }
    return openElastic(model, {
      ...threads,
      ...bandwidth,
      ...seq,
      ...(o.targetMs === undefined ? {} : { targetLatencyMs: o.targetMs }),
      ...(o.preloadBytes === undefined ? {} : { preloadBytes: o.preloadBytes }),
      direct: o.buffered !== true,
    })
  }
  return open(model, threads)
}

/** A full sequence of token ids spread over the vocabulary (the most embedding pages to read), all unmasked. */
function elasticFeeds(engine: ElasticEngine): Record<string, Tensor> {
  const n = engine.seq
  const vocab = engine.config.vocab
  const ids = BigInt64Array.from({ length: n }, (_, i) => BigInt(Math.floor((i * (vocab - 1)) / Math.max(1, n - 1))))
  return { input_ids: tensor('int64', [1, n], ids), attention_mask: tensor('int64', [1, n], new BigInt64Array(n).fill(1n)) }
}

function caption(engine: AnyEngine, model: string, budget: number | undefined): PlanCaption {
  if (engine.kind === 'elastic') {
    const { layers, heads } = engine.config
    const s = engine.stats()
    const measured = engine.targetLatencyMs === undefined ? {} : { latencyFactor: s.latencyFactor, targetAtRisk: s.targetAtRisk }
    return { model, kind: 'elastic', elastic: { plan: engine.plan, layers, heads, ...measured } }
  }
  return { model, kind: engine.kind, ...(budget === undefined ? {} : { budgetBytes: budget }) }
}

async function write(path: string, content: string): Promise<void> {
  try {
    await writeFile(path, content)
  } catch (err) {
    throw new IOError(`failed to write ${path}: ${(err as Error).message}`, { cause: err })
  }
}
