// SPDX-License-Identifier: Apache-2.0
// Measures one configuration in a fresh process, so VmHWM (peak RSS) belongs to it alone:
//
//   node dist/bench/memory/measure-child.js '<ChildRequest json>'     # prints one ChildResult line
//   node dist/bench/memory/measure-child.js '<PrepareRequest json>'   # prints one PrepareReport line
//   node dist/bench/memory/measure-child.js '<PairedRequest json>'    # prints one PairedResult line
//
// Order matters: the library and the addon are loaded and the inputs made before the baseline RSS is
// read, so peakBytes = VmHWM - baseline counts what opening and running the engine costs, and not
// Node, V8's startup heap, the addon's code or the input tensors.
import { readFileSync } from 'node:fs'
import * as lib from '../../lib/index.js'
import { binding } from '../../lib/native/binding.js'
import type { BudgetOpenOptions, ChildFailure, ChildRequest, ChildResult, PairedRequest, PairedResult, PrepareRequest } from './configs.js'
import { minimumBudgetOf, openBudgeted, prepareApi } from './lead-api.js'
import { memoryCase } from './memory-cases.js'

/** kB fields of /proc/self/status, in bytes. */
function procStatus(): { rss: number; hwm: number } {
  const s = readFileSync('/proc/self/status', 'utf8')
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(s)
    if (m === null) throw new Error(`/proc/self/status has no ${name} (Linux only)`)
    return Number(m[1]) * 1024
  }
  return { rss: field('VmRSS'), hwm: field('VmHWM') }
}

const gc = (globalThis as { gc?: () => void }).gc

/**
 * Collects garbage so that a dropped inference's outputs are gone: V8 frees a dead ArrayBuffer's memory
 * only after a later task, so one gc() right after infer() left the previous 25.7 MB logits of GPT-2
 * alive through the next inference (its peaks counted them twice). gc, a turn of the event loop, gc.
 */
async function collect(): Promise<void> {
  if (gc === undefined) return
  gc()
  await new Promise<void>((resolve) => setImmediate(resolve))
  gc()
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  const pos = (s.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo)
}

/** Milliseconds of one infer(); its outputs are dropped at once and collected before the next. */
async function timedInfer(engine: lib.Engine, feeds: Parameters<lib.Engine['infer']>[0]): Promise<number> {
  const t = performance.now()
  await engine.infer(feeds)
  const ms = performance.now() - t
  await collect()
  return ms
}

async function openFor(req: ChildRequest): Promise<lib.Engine> {
  const c = req.config
  if (c.pkg === 'onnx') return lib.open(req.file as `${string}.onnx`, { threads: req.threads })
  if (prepareApi === undefined) throw new Error('packages need prepare()/open(fpk, { memoryBudget, ... }) from the lead API (not in lib/index.ts yet)')
  const options: BudgetOpenOptions = {
    threads: req.threads,
    direct: true,
    ...(req.budgetBytes === undefined ? {} : { memoryBudget: req.budgetBytes }),
    ...(req.throttle === undefined ? {} : { ioBandwidth: req.throttle }),
    ...(c.preload === undefined ? {} : { preload: c.preload }),
    ...(c.staticPlan === undefined ? {} : { staticPlan: c.staticPlan }),
    ...(c.pin === undefined ? {} : { pin: c.pin }),
  }
  return openBudgeted(req.file, options)
}

async function measure(req: ChildRequest): Promise<ChildResult> {
  binding() // the addon is part of the baseline
  const feeds = memoryCase(req.model).feeds()
  await collect()
  const base = procStatus()
  const t0 = performance.now()
  const engine = await openFor(req)
  const openMs = performance.now() - t0
  const opened = procStatus()
  const time = () => timedInfer(engine, feeds)
  const warmupMs: number[] = []
  const timesMs: number[] = []
  // per timed run of a streaming plan: the lanes' waits and the reads' time (BudgetStats.lastPipeline)
  const pipeline: unknown[] = []
  for (let i = 0; i < req.warmup; i++) warmupMs.push(await time())
  for (let i = 0; i < req.runs; i++) {
    timesMs.push(await time())
    const last = (engine.stats() as { lastPipeline?: unknown }).lastPipeline
    if (last !== undefined) pipeline.push(last)
  }
  const end = procStatus()
  const stats = { ...(engine.stats() as unknown as Record<string, unknown>) }
  const minimumBudget = minimumBudgetOf(engine)
  await engine.close()
  return {
    ok: true,
    model: req.model,
    config: req.config,
    throttle: req.throttle,
    memoryBudget: req.budgetBytes,
    minimumBudget,
    baselineRSS: base.rss,
    baselineHWM: base.hwm,
    vmHWM: end.hwm,
    peakBytes: end.hwm - base.rss,
    openPeakBytes: opened.hwm - base.rss,
    openMs,
    warmupMs,
    timesMs,
    median: quantile(timesMs, 0.5),
    p10: quantile(timesMs, 0.1),
    p90: quantile(timesMs, 0.9),
    stats,
    pipeline,
    api: req.config.pkg === 'onnx' ? 'onnx' : 'package',
  }
}

/** PairedRequest: the budgeted and the unconstrained engine of one package, opened in turn in this process. */
async function paired(req: PairedRequest['paired']): Promise<PairedResult> {
  const feeds = memoryCase(req.model).feeds()
  const open = (budget: number | undefined) =>
    openFor({ model: req.model, file: req.file, config: { series: 'flexpipe', pkg: 'curve', budget: budget ?? 'unlimited' }, budgetBytes: budget, threads: req.threads, throttle: req.throttle, warmup: 1, runs: req.runs })
  const block = async (budget: number | undefined): Promise<number> => {
    const engine = await open(budget)
    try {
      await timedInfer(engine, feeds) // warm-up
      const ms: number[] = []
      for (let i = 0; i < req.runs; i++) ms.push(await timedInfer(engine, feeds))
      return quantile(ms, 0.5)
    } finally {
      await engine.close()
    }
  }
  const rounds: PairedResult['rounds'] = []
  for (let r = 0; r < req.rounds; r++) {
    const first = r % 2 === 0 ? req.budgetBytes : undefined
    const a = await block(first)
    const b = await block(first === undefined ? req.budgetBytes : undefined)
    const [budgetedMs, unconstrainedMs] = first === undefined ? [b, a] : [a, b]
    rounds.push({ budgetedMs, unconstrainedMs, ratio: budgetedMs / unconstrainedMs })
  }
  return {
    ok: true,
    model: req.model,
    budgetBytes: req.budgetBytes,
    throttle: req.throttle,
    threads: req.threads,
    rounds,
    budgetedMedianMs: quantile(rounds.map((x) => x.budgetedMs), 0.5),
    unconstrainedMedianMs: quantile(rounds.map((x) => x.unconstrainedMs), 0.5),
    ratio: quantile(rounds.map((x) => x.ratio), 0.5),
  }
}

async function main(): Promise<void> {
  const arg = process.argv[2]
  if (arg === undefined) throw new Error('usage: measure-child.js <json request>')
  const req = JSON.parse(arg) as ChildRequest | PrepareRequest | PairedRequest
  if ('paired' in req) {
    console.log(JSON.stringify(await paired(req.paired)))
    return
  }
  if ('prepare' in req) {
    const p = req.prepare
    if (prepareApi === undefined) throw new Error('prepare() is not exported by lib/index.ts yet (lead API)')
    console.log(JSON.stringify(await prepareApi(p.file, p.out, p.options)))
    return
  }
  try {
    console.log(JSON.stringify(await measure(req)))
  } catch (err) {
    const failure: ChildFailure = { ok: false, model: req.model, config: req.config, throttle: req.throttle, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }
    console.log(JSON.stringify(failure))
    process.exitCode = 1
  }
}

await main()
