// SPDX-License-Identifier: Apache-2.0
// Dynamic shapes (shape buckets, Nimble) on BERT-base, flexpipe against onnxruntime-node:
//
//   npm run bench:dynamic [-- --threads 2 --runs 10 --rounds 3 --lengths 8,16,...,128 --random-calls 10000
//                            --model .cache/bench-models/bert_base.onnx --ort-spinning off --skip random]
//
// Inputs input_ids and attention_mask, int64 [1, seq_len]: the ids are bench/models/cases.ts's bertFeeds
// (seed 4; a length's ids are the first of the 128), the mask all ones. flexpipe is opened with
// dims { batch: [1, 1], seq_len: [1, 128] } (every bucket planned at open) unless said otherwise.
//   1. lengths: per seq_len of --lengths (8, 16, ..., 128), in one process per engine, --rounds (3)
//      processes per engine, the engines alternating which goes first: the median of --runs (10) calls
//      back to back after warm-up; the first call at that length (a shape new to the process; for
//      flexpipe, in a bucket planned at open and warmed just before by two calls at another shape of it,
//      its ceiling unless that is itself one of the lengths, else the largest shape of the bucket that is
//      not); the first call at it again after a call at the warm shape (a seen shape, not the last one).
//      Each figure is the median over processes. The padded column: flexpipe at seq 128 holding the
//      shortest length's tokens, mask zero beyond (what a user without dynamic shapes runs for every
//      length). onnxruntime-node runs the same calls.
//   2. planning: Engine's BucketPlans.planFor (a private field, read by the child) timed alone, without a
//      run, on every seq_len 1..128 in a seeded order, each new to the process; then on it again and on
//      the shape before it: what a new shape in a planned bucket costs before it runs (the first-call
//      column is too noisy to subtract). A bucket without a template (BucketPlans.planFor declines it)
//      is timed through Engine's private planFor instead, which plans such a shape on its own, and is
//      marked * with the reason.
//   3. static plan: flexpipe at seq 128 opened with seq_len [128, 128] (one bucket of one shape: exactly
//      the static plan) against seq_len [1, 128], --rounds processes each, alternating (target: dynamic
//      within 1.05x of static).
//   4. memory: --random-calls (10000) calls at seq_len uniform in 8..128 (seeded), one process per
//      engine; VmRSS and VmHWM every 100 calls; the RSS of the idle process (node and the engine's
//      module loaded, before the model opens) is subtracted in the summary and the chart.
// onnxruntime-node: bench/models' session options (ortOptions: intra-op threads = --threads, inter-op 1,
// sequential, graphOptimizationLevel 'all') plus extra.session.intra_op.allow_spinning '0': its workers
// sleep between calls instead of spinning (~35 ms of CPU after each call otherwise). bench/models and
// bench/zoo keep onnxruntime's default (spinning on); --ort-spinning on does the same here.
// The model is read once per process at open (page cache warm): latencies are compute only.
// Prints tables; writes bench/results/dynamic.json and bench/results/dynamic-rss.svg (--out to move both).
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bucketOf as bucketOfShape, checkDimRange } from '../../lib/plan/dynamic/shape-buckets.js'
import { buildId } from '../build-id.js'
import { benchModelDir, exportCommand, machine, median, numberOption, option, ortOptions, repoRoot, resultsDir, round, versions } from '../models/cases.js'
import { lengthRows, lengthsTable, memorySummary, memoryTable, maxAbsDiff, planForSummary, rssSvg, type MemorySummary } from './dynamic-report.js'
import { randomLengths, seeded, type ChildResult, type EngineName, type Job, type LengthsJob, type LengthsResult, type PlanForResult, type RandomResult } from './shared.js'

const childJs = join(dirname(fileURLToPath(import.meta.url)), 'dynamic-child.js')

const MAX_LEN = 128
const RANDOM_MIN = 8
const RANDOM_MAX = 128
const RANDOM_SEED = 7
const PLAN_SEED = 11
const SAMPLE_EVERY = 100
const STATIC_TARGET = 1.05
/** Shape programs the engine keeps: maxPlans, default 16 (engine.ts); the calls that miss them make theirs again. */
const SHAPE_PROGRAMS = 16

const threads = Math.round(numberOption('threads', 'FLEXPIPE_BENCH_THREADS', 2))
const runs = Math.round(numberOption('runs', 'FLEXPIPE_BENCH_RUNS', 10))
const warmup = Math.round(numberOption('warmup', 'FLEXPIPE_BENCH_WARMUP', 3))
const rounds = Math.round(numberOption('rounds', 'FLEXPIPE_BENCH_ROUNDS', 3))
const randomCalls = Math.round(numberOption('random-calls', 'FLEXPIPE_BENCH_RANDOM_CALLS', 10000, true))
const timeoutS = numberOption('timeout', 'FLEXPIPE_BENCH_TIMEOUT_S', 4 * 3600)
const model = option('model', 'FLEXPIPE_BENCH_MODEL') ?? join(benchModelDir, 'bert_base.onnx')
const ortSpinning = option('ort-spinning', 'FLEXPIPE_BENCH_ORT_SPINNING') ?? 'off'
if (ortSpinning !== 'on' && ortSpinning !== 'off') throw new Error(`--ort-spinning: expected on or off, got ${ortSpinning}`)
const out = option('out', 'FLEXPIPE_BENCH_OUT') ?? join(resultsDir, 'dynamic.json')
const svgOut = out.replace(/\.json$/, '') + '-rss.svg'
const skip = new Set((option('skip', 'FLEXPIPE_BENCH_SKIP') ?? '').split(',').filter(Boolean))
for (const s of skip) if (!['lengths', 'planfor', 'static', 'random'].includes(s)) throw new Error(`--skip: expected some of lengths,planfor,static,random, got ${s}`)
const lengths = (option('lengths', 'FLEXPIPE_BENCH_LENGTHS') ?? Array.from({ length: MAX_LEN / 8 }, (_, i) => 8 * (i + 1)).join(',')).split(',').map(Number)
if (lengths.length === 0 || lengths.some((n) => !Number.isInteger(n) || n < 1 || n > MAX_LEN) || new Set(lengths).size !== lengths.length) {
  throw new Error(`--lengths: expected distinct integers in 1..${MAX_LEN}, e.g. 8,16,128`)
}

const dynamicDims = { batch: [1, 1], seq_len: [1, MAX_LEN] } as const
const staticDims = { batch: [1, 1], seq_len: [MAX_LEN, MAX_LEN] } as const
const ranges = new Map([['seq_len', checkDimRange('seq_len', { min: 1, max: MAX_LEN })]])
/** flexpipe's bucket of a seq_len under dynamicDims (default ceilings: powers of two), as lo..hi. */
function bucketRange(len: number): [number, number] {
  const b = bucketOfShape(new Map([['seq_len', len]]), ranges, (n) => n)
  return [b.lo.get('seq_len')!, b.hi.get('seq_len')!]
}
const bucketLabel = (len: number) => bucketRange(len).join('..')
/** The shape that warms a length's bucket: its ceiling, else the largest shape of it that is not a timed length. */
function warmShape(len: number): number | null {
  const [lo, hi] = bucketRange(len)
  for (let v = hi; v >= lo; v--) if (v !== len && !lengths.includes(v)) return v
  return null
}

const ortSessionOptions = { ...ortOptions(threads), ...(ortSpinning === 'off' ? { extra: { session: { intra_op: { allow_spinning: '0' } } } } : {}) }

/** Runs the child on one job: its last stdout line is the answer; its stderr (progress) passes through. */
function child(job: Job): Promise<ChildResult> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [childJs, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutS * 1000 })
    let stdout = ''
    let tail: string[] = []
    p.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
    p.stderr.setEncoding('utf8').on('data', (s: string) => {
      process.stderr.write(s)
      tail = [...tail, ...s.split('\n').filter(Boolean)].slice(-4)
    })
    p.on('close', (code, signal) => {
      const line = stdout.split('\n').filter((l) => l.startsWith('{')).pop()
      if (line !== undefined) return resolve(JSON.parse(line) as ChildResult)
      resolve({ ok: false, error: `${signal !== null ? `killed by ${signal}` : `exit code ${code}`}${tail.length > 0 ? `: ${tail.join(' / ')}` : ''}` })
    })
  })
}

async function must<T extends ChildResult & { ok: true }>(what: string, job: Job): Promise<T> {
  const r = await child(job)
  if (!r.ok) throw new Error(`${what}: ${r.error}`)
  return r as T
}

function gitCommit(): { commit: string; dirty: boolean } {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8' })
  const head = git('rev-parse', '--short', 'HEAD')
  return { commit: head.status === 0 ? head.stdout.trim() : 'unknown', dirty: git('status', '--porcelain', '--', 'lib', 'native').stdout.trim() !== '' }
}

/** The first call (1-based) by which every bucket of the random lengths has been called, if any. */
function allBucketsCalledAt(seqs: readonly number[]): number | undefined {
  const want = new Set<string>()
  for (let v = RANDOM_MIN; v <= RANDOM_MAX; v++) want.add(bucketLabel(v))
  const seen = new Set<string>()
  for (const [i, v] of seqs.entries()) {
    seen.add(bucketLabel(v))
    if (seen.size === want.size) return i + 1
  }
  return undefined
}

/** Calls that find no program of their shape in an LRU of `capacity` (what flexpipe then builds). */
function lruMisses(seqs: readonly number[], capacity: number): number {
  const lru = new Map<number, true>()
  let misses = 0
  for (const v of seqs) {
    if (lru.delete(v)) lru.set(v, true)
    else {
      misses++
      lru.set(v, true)
      if (lru.size > capacity) lru.delete(lru.keys().next().value!)
    }
  }
  return misses
}

async function main(): Promise<void> {
  if (!existsSync(model)) {
    console.error(`${relative(repoRoot, model) || model} not found. Make it with:\n  ${exportCommand} --only bert_base\n(random seeded weights, into .cache/bench-models/; needs python3-torch, python3-onnx)`)
    process.exit(1)
  }
  const info = versions()
  const native = info.flexpipeNative as { isa: string }
  const started = new Date().toISOString()
  const git = gitCommit()
  const m = machine()
  const ortSetting = `onnxruntime-node ${String(info.onnxruntimeNode)}: intraOpNumThreads ${threads}, interOpNumThreads 1, sequential, graphOptimizationLevel all, intra-op spinning ${ortSpinning}`
  const setting = `BERT-base ${relative(repoRoot, model)}; threads ${threads} per engine, each engine in its own process; flexpipe ISA ${native.isa}, io auto, model read at open (page cache warm: compute latency); ${ortSetting}`
  console.log(`# dynamic shapes: ${setting}`)
  console.log(`# machine: ${String(m.cpu)}, ${String(m.cores)} cores, load ${(m.loadavg as number[]).map((x) => x.toFixed(2)).join(' ')}; commit ${git.commit}${git.dirty ? ' (lib/ or native/ modified)' : ''}, build ${buildId().slice(0, 12)}`)
  console.log(`# lengths ${lengths.join(',')}; runs ${runs}, warm-up ${warmup}, ${rounds} processes per engine; random calls ${randomCalls}`)

  const base = { model, threads }
  const fpJob = { ...base, engine: 'flexpipe' as EngineName, dims: dynamicDims }
  const ortJob = { ...base, engine: 'ort' as EngineName, ortOptions: ortSessionOptions }
  const lengthsJob = (engine: typeof fpJob | typeof ortJob, padded: boolean): LengthsJob => ({
    ...engine,
    job: 'lengths',
    lengths,
    warm: lengths.map(warmShape),
    newShapes: true,
    runs,
    warmup,
    maxLen: MAX_LEN,
    ...(padded ? { padded: { realLength: Math.min(...lengths) } } : {}),
  })

  // 1. lengths
  const fpRuns: LengthsResult[] = []
  const ortRuns: LengthsResult[] = []
  if (!skip.has('lengths')) {
    for (let r = 0; r < rounds; r++) {
      for (const engine of r % 2 === 0 ? (['flexpipe', 'ort'] as const) : (['ort', 'flexpipe'] as const)) {
        console.log(`lengths, process ${r + 1}/${rounds}: ${engine}`)
        if (engine === 'flexpipe') fpRuns.push(await must<LengthsResult>('flexpipe lengths', lengthsJob(fpJob, true)))
        else ortRuns.push(await must<LengthsResult>('onnxruntime lengths', lengthsJob(ortJob, false)))
      }
    }
  }
  const rows = fpRuns.length > 0 ? lengthRows(fpRuns, ortRuns, bucketLabel) : []
  const at = (len: number) => rows.find((r) => r.length === len)
  const shortLong = at(16) !== undefined && at(MAX_LEN) !== undefined ? { flexpipe: round(at(16)!.flexpipeMs / at(MAX_LEN)!.flexpipeMs), ort: round(at(16)!.ortMs / at(MAX_LEN)!.ortMs) } : undefined
  const paddedCheck =
    fpRuns.length > 0 && fpRuns.at(-1)!.padded !== undefined
      ? { realLength: fpRuns.at(-1)!.padded!.realLength, maxAbsDiffVsDynamic: maxAbsDiff(fpRuns.at(-1)!.padded!.probe, fpRuns.at(-1)!.lengths.find((l) => l.length === fpRuns.at(-1)!.padded!.realLength)!.probe) }
      : undefined

  // 2. planning alone
  let planFor: { result: PlanForResult; summary: ReturnType<typeof planForSummary> } | undefined
  if (!skip.has('planfor')) {
    const order = Array.from({ length: MAX_LEN }, (_, i) => i + 1)
    const rand = seeded(PLAN_SEED)
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    console.log(`planning: BucketPlans.planFor on ${order.length} new shapes`)
    const result = await must<PlanForResult>('flexpipe planFor', { ...fpJob, job: 'planfor', shapes: order })
    planFor = { result, summary: planForSummary(result, bucketLabel) }
  }

  // 3. static plan against the declared range, at seq 128
  const staticRuns: { static: number[]; dynamic: number[]; staticOpenMs: number[]; dynamicOpenMs: number[] } = { static: [], dynamic: [], staticOpenMs: [], dynamicOpenMs: [] }
  if (!skip.has('static')) {
    for (let r = 0; r < rounds; r++) {
      for (const which of r % 2 === 0 ? (['static', 'dynamic'] as const) : (['dynamic', 'static'] as const)) {
        console.log(`static plan, process ${r + 1}/${rounds}: seq_len [${which === 'static' ? MAX_LEN : 1}, ${MAX_LEN}]`)
        const res = await must<LengthsResult>(`flexpipe ${which}`, { ...fpJob, dims: which === 'static' ? staticDims : dynamicDims, job: 'lengths', lengths: [MAX_LEN], warm: [null], newShapes: false, runs, warmup, maxLen: MAX_LEN })
        staticRuns[which].push(median(res.lengths[0]!.samplesMs))
        staticRuns[which === 'static' ? 'staticOpenMs' : 'dynamicOpenMs'].push(res.openMs)
      }
    }
  }
  const staticSummary =
    staticRuns.static.length > 0
      ? { staticMs: round(median(staticRuns.static)), dynamicMs: round(median(staticRuns.dynamic)), ratio: round(median(staticRuns.dynamic) / median(staticRuns.static)), staticOpenMs: round(median(staticRuns.staticOpenMs), 0), dynamicOpenMs: round(median(staticRuns.dynamicOpenMs), 0), perProcess: staticRuns }
      : undefined

  // 4. memory over random lengths
  const random: Array<{ engine: EngineName; result: RandomResult; summary: MemorySummary }> = []
  const seqs = randomLengths(RANDOM_SEED, randomCalls, RANDOM_MIN, RANDOM_MAX)
  const coveredAt = allBucketsCalledAt(seqs)
  if (!skip.has('random') && randomCalls > 0) {
    for (const engine of ['flexpipe', 'ort'] as const) {
      console.log(`random lengths: ${engine}, ${randomCalls} calls`)
      const result = await must<RandomResult>(`${engine} random`, { ...(engine === 'flexpipe' ? fpJob : ortJob), job: 'random', calls: randomCalls, seed: RANDOM_SEED, min: RANDOM_MIN, max: RANDOM_MAX, every: SAMPLE_EVERY })
      random.push({ engine, result, summary: memorySummary(engine === 'flexpipe' ? 'flexpipe' : 'onnxruntime', result, coveredAt) })
    }
  }

  // report
  console.log('')
  if (rows.length > 0) {
    console.log(`Latency per seq_len (ms; median over ${fpRuns.length} processes of each one's median of ${runs} calls); first-call columns: one call per process, median over processes`)
    for (const line of lengthsTable(rows, MAX_LEN)) console.log(line)
    if (rows.some((r) => !r.templated)) console.log(`* flexpipe's bucket has no template: each new shape of it is planned on its own (a plan, its own memory), not run through the bucket's plan`)
    if (shortLong !== undefined) console.log(`latency(seq 16) / latency(seq ${MAX_LEN}): flexpipe ${shortLong.flexpipe.toFixed(2)}, onnxruntime ${shortLong.ort.toFixed(2)}`)
    if (paddedCheck !== undefined) console.log(`padded run (seq ${MAX_LEN}, ${paddedCheck.realLength} real tokens) vs seq ${paddedCheck.realLength}: max |diff| of the probed outputs ${paddedCheck.maxAbsDiffVsDynamic.toExponential(1)}`)
    const fpStats = fpRuns.at(-1)!.stats as { arenaBytes: number; plans: number; buckets: unknown } | undefined
    if (fpStats !== undefined) console.log(`flexpipe after the lengths: arena ${(fpStats.arenaBytes / 1e6).toFixed(1)} MB, plans ${fpStats.plans}, buckets ${JSON.stringify(fpStats.buckets)}; open ${median(fpRuns.map((r) => r.openMs)).toFixed(0)} ms (onnxruntime session ${median(ortRuns.map((r) => r.openMs)).toFixed(0)} ms)`)
  }
  if (planFor !== undefined) {
    const s = planFor.summary
    const t = s.template
    console.log(`planning a new shape in a planned bucket (BucketPlans.planFor alone, ${t.shapes} of ${s.shapes} shapes): median ${t.freshMs.median.toFixed(3)} ms (p90 ${t.freshMs.p90.toFixed(3)}); the same shape again ${t.sameMs.median.toFixed(3)} ms; a seen shape after another ${t.seenOtherMs.median.toFixed(3)} ms; new - same: ${t.newShapeCostMs.toFixed(3)} ms; new shapes on a second engine of the process (code compiled): median ${t.warmFreshMs.median.toFixed(3)} ms (p90 ${t.warmFreshMs.p90.toFixed(3)})`)
    if (s.planned.shapes > 0) console.log(`  ${s.planned.shapes} shapes in buckets without a template, each planned on its own (Engine's planFor): median ${s.planned.freshMs.median.toFixed(1)} ms (p90 ${s.planned.freshMs.p90.toFixed(1)}); the same shape again ${s.planned.sameMs.median.toFixed(3)} ms`)
    console.log(`  by bucket (first-time median ms): ${s.byBucket.map((b) => `${b.bucket}${b.path === 'template' ? '' : '*'}: ${b.freshMedianMs.toFixed(3)}`).join(', ')}`)
    for (const u of s.untemplated) console.log(`  * bucket ${u.bucket} has no template: ${u.reason ?? '(no reason given)'}`)
  }
  if (staticSummary !== undefined) {
    console.log(`static plan vs buckets at seq ${MAX_LEN}: seq_len [${MAX_LEN}, ${MAX_LEN}] ${staticSummary.staticMs.toFixed(1)} ms, [1, ${MAX_LEN}] ${staticSummary.dynamicMs.toFixed(1)} ms: ${staticSummary.ratio.toFixed(3)}x (target <= ${STATIC_TARGET}x${staticSummary.ratio <= STATIC_TARGET ? '' : ', MISSED'}); open ${staticSummary.staticOpenMs} ms vs ${staticSummary.dynamicOpenMs} ms`)
  }
  if (random.length > 0) {
    console.log(`\nMemory over ${randomCalls} calls at seq_len uniform in ${RANDOM_MIN}..${RANDOM_MAX} (seed ${RANDOM_SEED}; every bucket called by call ${coveredAt ?? 'never'}; ${new Set(seqs).size} lengths; ${lruMisses(seqs, SHAPE_PROGRAMS)} calls miss an LRU of ${SHAPE_PROGRAMS} shape programs)`)
    for (const line of memoryTable(random.map((r) => r.summary))) console.log(line)
    const fpEnd = random.find((r) => r.engine === 'flexpipe')?.result.stats
    if (fpEnd !== undefined) console.log(`flexpipe at the end: ${JSON.stringify(fpEnd)}`)
  }

  mkdirSync(dirname(out), { recursive: true })
  const json = {
    benchmark: 'dynamic',
    date: started,
    finished: new Date().toISOString(),
    machine: { ...m, isa: native.isa, loadavgEnd: machine().loadavg },
    ...git,
    buildId: buildId(),
    ...info,
    setting,
    settings: { threads, runs, warmup, rounds, lengths, maxLen: MAX_LEN, flexpipeDims: dynamicDims, staticDims, ortSessionOptions, ortSpinning, randomCalls, randomRange: [RANDOM_MIN, RANDOM_MAX], randomSeed: RANDOM_SEED, sampleEvery: SAMPLE_EVERY, planSeed: PLAN_SEED, idsSeed: 4 },
    model: relative(repoRoot, model),
    lengths: rows,
    latency16over128: shortLong,
    padded: paddedCheck,
    planFor: planFor === undefined ? undefined : { ...planFor.summary, shapes: planFor.result.shapes, openMs: planFor.result.openMs, statsBefore: planFor.result.statsBefore, statsAfter: planFor.result.statsAfter },
    static: staticSummary === undefined ? undefined : { ...staticSummary, target: STATIC_TARGET },
    random:
      random.length === 0
        ? undefined
        : { allBucketsCalledAt: coveredAt, distinctLengths: new Set(seqs).size, shapePrograms: SHAPE_PROGRAMS, programMisses: lruMisses(seqs, SHAPE_PROGRAMS), engines: random.map((r) => ({ ...r.summary, idle: r.result.idle, opened: r.result.opened, openMs: r.result.openMs, callMs: r.result.callMs, stats: r.result.stats, points: r.result.points })) },
    processes: { flexpipe: fpRuns, onnxruntime: ortRuns },
  }
  writeFileSync(out, `${JSON.stringify(json, null, 1)}\n`)
  if (random.length > 0) {
    const title = `RSS over ${randomCalls} calls, BERT-base at random seq_len ${RANDOM_MIN}..${RANDOM_MAX}, ${threads} threads`
    writeFileSync(svgOut, rssSvg(random.map((r) => ({ label: r.summary.engine, idle: r.result.idle, points: r.result.points })), title))
  }
  console.log(`wrote ${relative(repoRoot, out)}${random.length > 0 ? ` and ${relative(repoRoot, svgOut)}` : ''}`)
}

await main()
