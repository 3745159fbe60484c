// SPDX-License-Identifier: Apache-2.0
// Measures one configuration in a fresh process, so VmHWM belongs to it alone:
//
//   node --expose-gc dist/bench/elastic/measure-child.js '<ChildRequest json>'   # prints one answer line
//
// The library and addon are loaded and the dev inputs tokenized before the baseline RSS is read, so
// peakBytes = VmHWM - baseline counts what opening and running the engine costs. Then: a fresh
// ElasticEngine (cold IO as requested), `warmup` inferences, `runs` timed inferences over the dev
// texts (cycling when there are fewer), each padded to the plan's sequence length by the engine.
// The timed inferences run back to back with no forced GC between them: a gc() there leaves V8's
// concurrent sweeping and unmapping running on the two cores during the next inference (its first
// layer's start moved from 0.1 to 5-11 ms at p90 here), which measures the benchmark, not the engine.
import { readFileSync } from 'node:fs'
import { readElasticPackage } from '../../lib/package/elastic-manifest.js'
import { ElasticEngine } from '../../lib/runtime/elastic-engine.js'
import { LatencyTargetError } from '../../lib/errors.js'
import { binding } from '../../lib/native/binding.js'
import { ioSettings, type ChildAnswer, type ChildRequest, type Measured, type PlanSummary } from './configs.js'
import { devInputs } from './dev-inputs.js'

/** VmRSS and VmHWM of this process, in bytes. */
function procStatus(): { rss: number; hwm: number } {
  const s = readFileSync('/proc/self/status', 'utf8')
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(s)
    if (m === null) throw new Error(`/proc/self/status has no ${name} (Linux only)`)
    return Number(m[1]) * 1024
  }
  return { rss: field('VmRSS'), hwm: field('VmHWM') }
}

/** Linear interpolation between order statistics (cases.ts's; not imported: it loads onnxruntime). */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  const pos = (s.length - 1) * q
  const [lo, hi] = [Math.floor(pos), Math.ceil(pos)]
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo)
}

const collect = (globalThis as { gc?: () => void }).gc ?? (() => {})

function summary(e: ElasticEngine): PlanSummary {
  const p = e.plan
  return {
    depth: p.depth,
    width: p.width,
    bits: p.shards.map((row) => row.map((s) => s.bits)),
    preloaded: p.shards.map((row) => row.map((s) => s.preloaded)),
    bitsHistogram: { ...p.bitsHistogram },
    uniformBits: p.uniformBits,
    schedule: p.schedule,
    preloadBytes: p.preloadBytes,
    loadBytes: p.loadBytes,
    modelledMs: p.modelledMs,
  }
}

async function measure(req: ChildRequest): Promise<ChildAnswer> {
  binding() // the addon is part of the baseline
  const pkg = await readElasticPackage(req.pkg)
  const inputs = await devInputs(pkg, req.dev, req.seq, req.warmup + req.runs)
  collect()
  const base = procStatus()
  const io = ioSettings[req.io]
  const c = req.config
  const t0 = performance.now()
  let engine: ElasticEngine
  try {
    engine = await ElasticEngine.open(req.pkg, {
      targetLatencyMs: req.targetMs,
      preloadBytes: c.preloadBytes ?? 0,
      threads: req.threads,
      direct: io.direct,
      ...(io.bandwidth ? { bandwidth: io.bandwidth } : {}),
      seq: req.seq,
      planner: c.planner,
      ...(c.plannerBits ? { plannerBits: c.plannerBits } : {}),
    })
  } catch (err) {
    if (err instanceof LatencyTargetError) return { ok: true, feasible: false, minimumMs: err.minimumMs, message: err.message }
    throw err
  }
  const openMs = performance.now() - t0
  const opened = procStatus()
  const openedPlan = summary(engine)
  let replans = 0
  let inForce = engine.plan
  const warmupMs: number[] = []
  const timesMs: number[] = []
  const engineMs: number[] = []
  let bytesRead = 0
  for (let i = 0; i < req.warmup + req.runs; i++) {
    const ids = inputs[i % inputs.length]!.ids
    const t = performance.now()
    const { times } = await engine.inferIds(ids)
    const ms = performance.now() - t
    // A re-plan this call queued runs before the next call, inside its timed wall time (as a caller
    // sending requests back to back would see it); it shows here one call later.
    if (engine.plan !== inForce) {
      replans++
      inForce = engine.plan
    }
    if (i < req.warmup) warmupMs.push(ms)
    else {
      timesMs.push(ms)
      engineMs.push(times.totalMs)
      bytesRead = times.bytesRead
    }
  }
  await engine.settled()
  if (engine.plan !== inForce) replans++
  const end = procStatus()
  const stats = engine.stats()
  const plan = summary(engine)
  await engine.close()
  const result: Measured = {
    ok: true,
    feasible: true,
    openedPlan,
    replans,
    plan,
    residentParameterBytes: stats.residentParameterBytes,
    preloadRegionBytes: stats.preloadBytes,
    stagingBytes: stats.stagingBytes,
    arenaBytes: stats.arenaBytes,
    baselineRSS: base.rss,
    vmHWM: end.hwm,
    peakBytes: end.hwm - base.rss,
    openPeakBytes: opened.hwm - base.rss,
    openMs,
    warmupMs,
    timesMs,
    engineMs,
    bytesReadPerRun: bytesRead,
    median: quantile(timesMs, 0.5),
    p95: quantile(timesMs, 0.95),
    within: timesMs.filter((ms) => ms <= 1.05 * req.targetMs).length / timesMs.length,
    reader: stats.reader,
  }
  return result
}

async function main(): Promise<void> {
  const arg = process.argv[2]
  if (arg === undefined) throw new Error('usage: measure-child.js <json request>')
  try {
    console.log(JSON.stringify(await measure(JSON.parse(arg) as ChildRequest)))
  } catch (err) {
    console.log(JSON.stringify({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }))
    process.exitCode = 1
  }
}

await main()
