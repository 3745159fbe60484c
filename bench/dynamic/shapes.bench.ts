// SPDX-License-Identifier: Apache-2.0
// `npm run bench:shapes`: the models of varying shape besides BERT-base (bench:dynamic), each at every
// value of its range on flexpipe (dims declared: every bucket planned at open), on flexpipe padded to
// the range's max, and on onnxruntime-node (intra-op spinning off): DistilBERT-base over seq_len 8..128,
// PP-OCRv4 rec over widths 80..1280, ResNet-50 over batch 1..8. Each engine in its own child process,
// the engines alternating over rounds. Per value: the first call (a shape new to the process) and the
// median of the timed calls after it. The outputs of the two engines are compared per value (the first
// 256 values of the first output). Writes bench/results/dynamic-models.json.
//
//   --rounds N     child processes per (case, engine), alternating (default 2)
//   --runs N       timed calls per value (default 5)
//   --threads N    (default 2)
//   --cases a,b    distilbert,ocr_rec,resnet50 (default all)
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { medianOf } from './shared.js'

const repoRoot = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..')
const modelDir = join(repoRoot, '.cache', 'bench-models')
const ocrDir = join(repoRoot, 'node_modules', '@gutenye', 'ocr-models', 'assets')

type Feed = { readonly dtype: 'int64' | 'float32'; readonly dims: number[]; readonly data: BigInt64Array | Float32Array }

interface Case {
  readonly name: string
  readonly label: string
  readonly model: string
  readonly dims: Readonly<Record<string, readonly [number, number]>>
  readonly dim: string
  readonly values: readonly number[]
}

const ocrWidth = 'p2o.DynamicDimension.1'
const cases: readonly Case[] = [
  { name: 'distilbert', label: 'DistilBERT-base, seq_len 8..128 (batch 1)', model: join(modelDir, 'distilbert_base.onnx'), dims: { batch: [1, 1], seq_len: [1, 128] }, dim: 'seq_len', values: Array.from({ length: 16 }, (_, i) => 8 * (i + 1)) },
  { name: 'ocr_rec', label: 'PP-OCRv4 rec, width 80..1280 (48 high)', model: join(ocrDir, 'ch_PP-OCRv4_rec_infer.onnx'), dims: { 'p2o.DynamicDimension.0': [1, 1], [ocrWidth]: [80, 1280] }, dim: ocrWidth, values: Array.from({ length: 16 }, (_, i) => 80 * (i + 1)) },
  { name: 'resnet50', label: 'ResNet-50, batch 1..8 (224x224)', model: join(modelDir, 'resnet50.onnx'), dims: { batch: [1, 8] }, dim: 'batch', values: [1, 2, 3, 4, 5, 6, 7, 8] },
]

/** The inputs at value `v`: real content up to `v`, and with `padTo`, padded to that size (mask 0 / zeros). */
function feedsOf(c: Case, v: number, padTo?: number): Record<string, Feed> {
  const n = padTo ?? v
  if (c.name === 'distilbert') {
    const ids = new BigInt64Array(n)
    const mask = new BigInt64Array(n)
    for (let i = 0; i < v; i++) {
      ids[i] = BigInt(1 + ((i * 7919 + 17) % 30000))
      mask[i] = 1n
    }
    return { input_ids: { dtype: 'int64', dims: [1, n], data: ids }, attention_mask: { dtype: 'int64', dims: [1, n], data: mask } }
  }
  if (c.name === 'ocr_rec') {
    const data = new Float32Array(3 * 48 * n)
    for (let ch = 0; ch < 3; ch++) for (let y = 0; y < 48; y++) for (let x = 0; x < v; x++) data[(ch * 48 + y) * n + x] = Math.sin(0.37 * x + 0.11 * y + ch)
    return { x: { dtype: 'float32', dims: [1, 3, 48, n], data } }
  }
  const image = 3 * 224 * 224
  const data = new Float32Array(n * image)
  for (let i = 0; i < v * image; i++) data[i] = Math.sin(i * 0.001)
  return { input: { dtype: 'float32', dims: [n, 3, 224, 224], data } }
}

interface ChildJob {
  readonly case: string
  readonly engine: 'flexpipe' | 'ort'
  readonly threads: number
  readonly runs: number
}

interface ValueResult {
  readonly firstMs: number
  readonly ms: number
  /** flexpipe only: the median at the input padded to the range's max (same real content). */
  readonly paddedMs?: number
  readonly head: number[]
}

async function child(job: ChildJob): Promise<void> {
  const c = cases.find((x) => x.name === job.case)!
  const max = c.values[c.values.length - 1]!
  const feeds = new Map(c.values.map((v) => [v, feedsOf(c, v)]))
  const padded = new Map(c.values.map((v) => [v, feedsOf(c, v, max)]))
  let run: (f: Record<string, Feed>) => Promise<ArrayLike<number>>
  let stats = (): unknown => undefined
  if (job.engine === 'flexpipe') {
    const fp = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'index.js')).href)) as typeof import('../../lib/index.js')
    const engine = await fp.open(c.model as `${string}.onnx`, { threads: job.threads, dims: c.dims })
    const first = engine.outputs[0]!.name
    run = async (f) => (await engine.infer(f))[first]!.data as Float32Array
    stats = () => (engine as unknown as { stats(): { buckets?: unknown } }).stats().buckets
  } else {
    const ort = await import('onnxruntime-node')
    const session = await ort.InferenceSession.create(c.model, {
      intraOpNumThreads: job.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    })
    const first = session.outputNames[0]!
    run = async (f) => {
      const inputs: Record<string, import('onnxruntime-node').Tensor> = {}
      for (const [k, t] of Object.entries(f)) inputs[k] = new ort.Tensor(t.dtype, t.data, t.dims)
      return (await session.run(inputs))[first]!.data as Float32Array
    }
  }
  const timed = async (f: Record<string, Feed>): Promise<[number, ArrayLike<number>]> => {
    const t0 = performance.now()
    const out = await run(f)
    return [performance.now() - t0, out]
  }
  const out: Record<string, ValueResult> = {}
  for (const v of c.values) {
    const [firstMs, y] = await timed(feeds.get(v)!)
    const ms: number[] = []
    for (let r = 0; r < job.runs; r++) ms.push((await timed(feeds.get(v)!))[0])
    let paddedMs: number | undefined
    if (job.engine === 'flexpipe') {
      await run(padded.get(v)!)
      const pm: number[] = []
      for (let r = 0; r < job.runs; r++) pm.push((await timed(padded.get(v)!))[0])
      paddedMs = medianOf(pm)
    }
    out[String(v)] = { firstMs, ms: medianOf(ms), ...(paddedMs === undefined ? {} : { paddedMs }), head: Array.from(y).slice(0, 256) }
  }
  process.stdout.write(`RESULT ${JSON.stringify({ values: out, buckets: stats() })}\n`)
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { child: { type: 'string' }, rounds: { type: 'string' }, runs: { type: 'string' }, threads: { type: 'string' }, cases: { type: 'string' } } })
  if (values.child !== undefined) return child(JSON.parse(values.child) as ChildJob)
  const rounds = Number(values.rounds ?? 2)
  const runs = Number(values.runs ?? 5)
  const threads = Number(values.threads ?? 2)
  const selected = values.cases === undefined ? cases : cases.filter((c) => values.cases!.split(',').includes(c.name))
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown'
  const ortVersion = (JSON.parse(readFileSync(join(repoRoot, 'node_modules', 'onnxruntime-node', 'package.json'), 'utf8')) as { version: string }).version
  console.log(`machine: ${cpu}; ${threads} threads; onnxruntime-node ${ortVersion} (intra-op spinning off); ${rounds} processes per (case, engine), alternating; ${runs} timed calls per value`)
  const results: Array<Record<string, unknown>> = []
  for (const c of selected) {
    if (!existsSync(c.model)) {
      console.log(`${c.label}: ${c.model} missing (/usr/bin/python3 scripts/bench/export_models.py); skipped`)
      continue
    }
    const got: Record<'flexpipe' | 'ort', Array<{ values: Record<string, ValueResult>; buckets?: unknown }>> = { flexpipe: [], ort: [] }
    for (let r = 0; r < rounds; r++) {
      for (const engine of r % 2 === 0 ? (['flexpipe', 'ort'] as const) : (['ort', 'flexpipe'] as const)) {
        const job: ChildJob = { case: c.name, engine, threads, runs }
        const p = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify(job)], { encoding: 'utf8', maxBuffer: 1 << 26 })
        const line = p.stdout.split('\n').find((l) => l.startsWith('RESULT '))
        if (p.status !== 0 || line === undefined) throw new Error(`${c.label} on ${engine}: the child failed:\n${p.stderr}`)
        got[engine].push(JSON.parse(line.slice(7)) as { values: Record<string, ValueResult> })
      }
    }
    const rows = c.values.map((v) => {
      const k = String(v)
      const f = got.flexpipe.map((x) => x.values[k]!)
      const o = got.ort.map((x) => x.values[k]!)
      const a = f[0]!.head
      const b = o[0]!.head
      let diff = 0
      let scale = 0
      for (let i = 0; i < b.length; i++) {
        diff = Math.max(diff, Math.abs(a[i]! - b[i]!))
        scale = Math.max(scale, Math.abs(b[i]!))
      }
      const row = {
        value: v,
        flexpipeMs: medianOf(f.map((x) => x.ms)),
        flexpipeFirstMs: medianOf(f.map((x) => x.firstMs)),
        paddedMs: medianOf(f.map((x) => x.paddedMs!)),
        ortMs: medianOf(o.map((x) => x.ms)),
        ortFirstMs: medianOf(o.map((x) => x.firstMs)),
        maxAbsDiff: diff,
        maxAbs: scale,
      }
      return { ...row, ratio: row.flexpipeMs / row.ortMs }
    })
    const geomean = Math.exp(rows.reduce((s, r) => s + Math.log(r.ratio), 0) / rows.length)
    console.log(`\n${c.label} (buckets: ${JSON.stringify(got.flexpipe[0]!.buckets)})`)
    console.log(`| ${c.dim} | flexpipe ms (first call) | padded to ${c.values[c.values.length - 1]} | onnxruntime ms (first call) | flexpipe / onnxruntime | max |diff| |`)
    console.log('|---|---|---|---|---|---|')
    for (const r of rows) {
      console.log(`| ${r.value} | ${r.flexpipeMs.toFixed(1)} (${r.flexpipeFirstMs.toFixed(1)}) | ${r.paddedMs.toFixed(1)} | ${r.ortMs.toFixed(1)} (${r.ortFirstMs.toFixed(1)}) | ${r.ratio.toFixed(2)} | ${r.maxAbsDiff.toExponential(1)} of ${r.maxAbs.toFixed(2)} |`)
    }
    console.log(`geometric mean flexpipe / onnxruntime: ${geomean.toFixed(2)}; smallest / largest value on flexpipe: ${(rows[0]!.flexpipeMs / rows[rows.length - 1]!.flexpipeMs).toFixed(2)}`)
    results.push({ case: c.name, label: c.label, model: c.model.replace(`${repoRoot}/`, ''), dims: c.dims, dim: c.dim, geomean, buckets: got.flexpipe[0]!.buckets, rows })
  }
  const file = join(repoRoot, 'bench', 'results', 'dynamic-models.json')
  writeFileSync(file, `${JSON.stringify({ machine: { cpu, threads }, onnxruntimeNode: ortVersion, ortSpinning: 'off', rounds, runs, date: new Date().toISOString(), cases: results }, null, 2)}\n`)
  console.log(`\nwrote ${file}`)
}

await main()
