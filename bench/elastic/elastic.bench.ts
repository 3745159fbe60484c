// SPDX-License-Identifier: Apache-2.0
// STI's end-to-end evaluation (seed §7.1-7.2) on flexpipe's elastic engine:
//
//   npm run bench:elastic
//   npm run bench:elastic -- --targets tight,40 --io cold --runs 30 --dev-limit 100
//   npm run bench:elastic -- --model synthetic        # harness check on a random model
//
// Options (argument or environment): --threads / FLEXPIPE_BENCH_THREADS (2), --runs /
// FLEXPIPE_BENCH_RUNS (timed inferences per configuration, 200), --warmup / FLEXPIPE_BENCH_WARMUP (2),
// --targets / FLEXPIPE_BENCH_TARGETS (tight, medium, loose = 0.55, 0.8, 1.2 x the full model's compute
// on this machine, or milliseconds), --io / FLEXPIPE_BENCH_IO (cold, throttled), --dev-limit /
// FLEXPIPE_BENCH_DEV_LIMIT (dev examples for accuracy and importance; all by default), --model /
// FLEXPIPE_BENCH_MODEL (test/fixtures/spam-encoder, or synthetic), --seq / FLEXPIPE_BENCH_SEQ (the
// tokenizer's max_length), --timeout / FLEXPIPE_BENCH_TIMEOUT_S (per child, 600), --reprofile /
// FLEXPIPE_BENCH_REPROFILE=1 (measure the device profiles again).
//
// For each IO mode x T: flexpipe with a 0, 1 and 5 MB preload buffer (0 MB is the seed's "Ours-0MB")
// and the baselines Load&Exec, StdPL-{full,2bit,6bit}, PreloadModel-{full,6bit}, each in its own child
// (measure-child.ts); the dev accuracy of each plan (plan-accuracy.ts). Prints the tables and the
// acceptance checks, writes bench/results/elastic.json and elastic-<io>.svg. Engine errors fail the
// tap test; the numbers never do.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import tap from 'tap'
import { computeFor } from '../../lib/profile/elastic-device.js'
import { machine, repoRoot, resultsDir, versions } from '../models/cases.js'
import { benchPackage, cacheDir } from './bench-package.js'
import { configurations, ioSettings, MiB, type ChildRequest, type Row } from './configs.js'
import { maxLengthOf } from './dev-inputs.js'
import { benchOptions, looseTarget, resolveTargets, type Target } from './options.js'
import { PlanAccuracy } from './plan-accuracy.js'
import { accuracyMemoryPlot } from './plot.js'
import { checks, histogram, tables, targetLabel } from './report.js'
import { measureChild } from './run-child.js'
import { syntheticModel } from './synthetic-model.js'

const o = benchOptions()
const log = (line: string): void => console.log(line)

/** Measures one configuration in a child and adds its plan's accuracy. */
async function runOne(t: Pick<typeof tap, 'pass' | 'fail'>, req: ChildRequest, target: Target, acc: PlanAccuracy): Promise<Row> {
  const result = measureChild(req, o.timeoutS)
  const what = `${req.io} ${targetLabel(target)} ${req.config.label}`
  if (!result.ok) {
    t.fail(`${what}: ${result.error}`)
    return { io: req.io, target: target.name, targetMs: target.ms, config: req.config.label, result }
  }
  if (!result.feasible) {
    t.pass(`${what}: infeasible (the planner needs T >= ${result.minimumMs.toFixed(1)} ms)`)
    return { io: req.io, target: target.name, targetMs: target.ms, config: req.config.label, result }
  }
  const accuracy = await acc.of(result.openedPlan)
  const finalAccuracy = await acc.of(result.plan)
  const residentBytes = result.residentParameterBytes + result.openedPlan.preloadBytes
  const p = result.openedPlan
  const f = result.plan
  t.pass(
    `${what}: ${p.depth}x${p.width} [${histogram(p.bitsHistogram)}], median ${result.median.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms, ${(100 * result.within).toFixed(0)}% within 1.05 T, ` +
      `accuracy ${(100 * accuracy).toFixed(2)}%, resident ${(residentBytes / MiB).toFixed(2)} MB, peak ${(result.peakBytes / MiB).toFixed(2)} MB; ${result.replans} re-plans, final ${f.depth}x${f.width} ${(100 * finalAccuracy).toFixed(2)}%`,
  )
  return { io: req.io, target: target.name, targetMs: target.ms, config: req.config.label, result, accuracy, finalAccuracy, residentBytes }
}

tap.setTimeout(0)
tap.test('elastic: accuracy, latency and memory of STI configurations under target latencies', { timeout: 0 }, async (t) => {
  const started = new Date().toISOString()
  const machineStart = machine()
  const modelDir = o.model === 'synthetic' ? await syntheticModel(join(cacheDir, 'synthetic'), log) : o.model
  if (!existsSync(join(modelDir, 'model.safetensors'))) {
    t.fail(`${relative(repoRoot, modelDir)}: no model.safetensors (the fixture is made by scripts/fixtures/train_encoder.py; --model synthetic checks the harness)`)
    return
  }
  const bp = await benchPackage(modelDir, { threads: o.threads, io: o.io, devLimit: o.devLimit, seq: o.seq, reprofile: o.reprofile }, log)
  const c = bp.pkg.config
  const seq = o.seq ?? maxLengthOf(bp.pkg)
  const compute = computeFor(bp.profiles.cold!, seq)!
  const fullMs = compute.fixedMs + c.layers * compute.layerMs[c.heads]!
  const targets = resolveTargets(o.targets, fullMs)
  const loose = looseTarget(targets)
  const acc = await PlanAccuracy.open(bp, seq, o.threads, o.devLimit)
  const fullAccuracy = await acc.full()
  log(`model ${relative(repoRoot, modelDir)}: ${c.layers} layers x ${c.heads} shards, seq ${seq}; ${o.threads} threads; ${o.runs} timed runs after ${o.warmup} warm-up; dev ${acc.devCount} examples`)
  log(`F = fixedMs + L * layerMs[M] = ${compute.fixedMs.toFixed(2)} + ${c.layers} * ${compute.layerMs[c.heads]!.toFixed(2)} = ${fullMs.toFixed(1)} ms (cold profile, seq bucket ${compute.seq}); targets: ${targets.map(targetLabel).join(', ')}`)
  log(`dev accuracy of the full model with fp32 shards: ${(100 * fullAccuracy).toFixed(2)}%`)
  const rows: Row[] = []
  for (const io of o.io) {
    for (const target of targets) {
      for (const config of configurations) {
        const req: ChildRequest = { pkg: bp.path, dev: bp.dev, config, io, targetMs: target.ms, threads: o.threads, seq, warmup: o.warmup, runs: o.runs }
        rows.push(await runOne(t, req, target, acc))
      }
    }
  }
  acc.dispose()
  const checkLines = checks(rows, o.io, targets, loose, acc.devCount)
  for (const line of [...tables(rows, o.io, targets), '', ...checkLines]) log(line)

  mkdirSync(resultsDir, { recursive: true })
  for (const io of o.io) {
    if (!rows.some((r) => r.io === io && r.accuracy !== undefined)) continue
    const svg = join(resultsDir, `elastic-${io}.svg`)
    writeFileSync(svg, accuracyMemoryPlot(rows, io, targets))
    log(`wrote ${relative(repoRoot, svg)}`)
  }
  const json = {
    benchmark: 'elastic',
    date: started,
    finished: new Date().toISOString(),
    machine: { ...machineStart, loadavgEnd: machine().loadavg },
    ...versions(),
    settings: {
      model: relative(repoRoot, modelDir),
      package: relative(repoRoot, bp.path),
      packageWork: bp.work,
      reprofiled: o.reprofile,
      threads: o.threads,
      runs: o.runs,
      warmup: o.warmup,
      seq,
      devExamples: acc.devCount,
      mb: '1 MB = 2^20 bytes',
      io: Object.fromEntries(o.io.map((m) => [m, ioSettings[m]])),
      latency: 'wall time of engine.inferIds(ids) over dev texts (token ids cut to seq, padded by the engine); within = fraction <= 1.05 T',
      accuracy: 'dev accuracy of the opened plan\'s sub-model at its shard bitwidths, every shard resident (ElasticRunner, residentPlan): the planners compared on the same device profile; finalAccuracy: the same for the plan in force after the timed calls (online calibration adapts each engine to its own measurements)',
      residentBytes: 'non-shard parameters (float32) + plan.preloadBytes (flexpipe: its preload buffer; PreloadModel: every shard of the model at its bitwidth)',
      peakBytes: 'VmHWM at the end of the child minus its VmRSS after loading the library + addon and tokenizing the inputs',
    },
    fullComputeMs: fullMs,
    computeProfile: compute,
    deviceProfiles: bp.profiles,
    importance: bp.pkg.meta.importance,
    fullAccuracy,
    targets,
    rows,
    checks: checkLines,
  }
  const file = join(resultsDir, 'elastic.json')
  writeFileSync(file, `${JSON.stringify(json, null, 1)}\n`)
  log(`wrote ${relative(repoRoot, file)}`)
})
