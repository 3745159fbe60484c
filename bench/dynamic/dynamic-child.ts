// SPDX-License-Identifier: Apache-2.0
// One engine in one fresh process, for bench:dynamic (dynamic.bench.ts spawns it; nothing else runs in it).
//
//   node dist/bench/dynamic/dynamic-child.js '{"job":"lengths","engine":"flexpipe","model":".cache/bench-models/bert_base.onnx",
//     "threads":2,"dims":{"batch":[1,1],"seq_len":[1,128]},"lengths":[8,16],"warm":[7,15],"newShapes":true,"runs":10,"warmup":3,"maxLen":128}'
//
// Jobs (shared.ts): lengths (per-length latency, first calls at new and at seen shapes, padded to maxLen),
// planfor (flexpipe's BucketPlans.planFor alone), random (calls at random lengths, memory every N calls).
// Prints one JSON line (the last line of stdout); progress goes to stderr. The engine's module is
// imported only after the idle memory is read, and only that engine's: onnxruntime's process never
// loads flexpipe's addon, nor flexpipe's onnxruntime.
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { bertIds, medianOf, memory, randomLengths, type ChildResult, type Job, type LengthResult, type LengthsJob, type Memory, type PlanForJob, type PlanPath, type BucketInfo, type Probe, type RandomJob } from './shared.js'

const repoRoot = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..')
const now = () => performance.now()

interface Outputs {
  readonly lhs: Float32Array
  readonly pooler: Float32Array
}

interface Opened {
  /** Inputs of seq `len` holding the first `real` ids (mask 1 there, 0 beyond; ids beyond are [PAD] = 0). */
  feeds(len: number, real?: number): unknown
  run(feeds: unknown): Promise<Outputs>
  stats?(): unknown
  /** flexpipe: the plan of inputs of seq `len` found (BucketPlans.planFor, else Engine's planFor), nothing run. */
  planFor?(len: number): Promise<PlanPath>
  /** flexpipe: its shape buckets. */
  buckets?(): BucketInfo[]
  close(): Promise<void>
}

function arrays(ids: BigInt64Array, len: number, real: number): { ids: BigInt64Array; mask: BigInt64Array } {
  const a = new BigInt64Array(len)
  a.set(ids.subarray(0, Math.min(real, len)))
  const m = new BigInt64Array(len)
  m.fill(1n, 0, Math.min(real, len))
  return { ids: a, mask: m }
}

/** Imports the engine's module (before this, the process holds neither engine) and reports the memory then. */
async function load(job: Job): Promise<{ idle: Memory; open: () => Promise<Opened> }> {
  const ids = bertIds(Math.max(job.job === 'lengths' ? job.maxLen : 0, job.job === 'random' ? job.max : 0, job.job === 'planfor' ? Math.max(...job.shapes) : 0, 1))
  if (job.engine === 'flexpipe') {
    const fp = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'index.js')).href)) as typeof import('../../lib/index.js')
    fp.nativeInfo() // loads the addon
    const idle = memory()
    return {
      idle,
      open: async () => {
        const engine = await fp.open(job.model, { threads: job.threads, ...(job.dims === undefined ? {} : { dims: job.dims }) })
        if (!(engine instanceof fp.Engine)) throw new Error(`${job.model} opened as ${engine.constructor.name}, expected an ONNX model`)
        const names = engine.inputs.map((i) => i.name)
        if (names.join() !== 'input_ids,attention_mask') throw new Error(`${job.model}: inputs ${names.join(', ')}, expected input_ids, attention_mask`)
        const tensorsAt = (len: number, real = len) => {
          const a = arrays(ids, len, real)
          return [fp.tensor('int64', [1, len], a.ids), fp.tensor('int64', [1, len], a.mask)]
        }
        // Engine's private field `buckets` (its BucketPlans) and private method planFor, used here (as
        // `(engine as any).buckets` would) to time finding a shape's plan alone, with no run and outside the
        // engine's call queue: what a new shape costs the engine before it runs. Not public API; the planfor
        // job calls them in a process that runs nothing else. BucketPlans' own map `buckets` says which
        // buckets have a template.
        type Buckets = { planFor(tensors: unknown[]): Promise<unknown>; buckets: Map<string, { template?: unknown; reason?: string }> }
        const internals = engine as unknown as { buckets?: Buckets; planFor(tensors: unknown[]): Promise<unknown> }
        const buckets = internals.buckets
        return {
          feeds: (len, real) => {
            const [a, m] = tensorsAt(len, real)
            return { input_ids: a!, attention_mask: m! }
          },
          run: async (feeds) => {
            const out = await engine.infer(feeds as Record<string, import('../../lib/index.js').Tensor>)
            return { lhs: out.last_hidden_state!.data as Float32Array, pooler: out.pooler_output!.data as Float32Array }
          },
          stats: () => engine.stats(),
          planFor: async (len) => {
            if (buckets === undefined) throw new Error('this engine has no shape buckets (Engine.buckets undefined)')
            const tensors = tensorsAt(len)
            if ((await buckets.planFor(tensors)) !== undefined) return 'template'
            await internals.planFor.call(engine, tensors)
            return 'planned'
          },
          buckets: () => [...(buckets?.buckets ?? new Map())].map(([key, b]) => ({ key, templated: b.template !== undefined, ...(b.reason === undefined ? {} : { reason: b.reason }) })),
          close: () => engine.close(),
        }
      },
    }
  }
  const ort = (await import('onnxruntime-node')) as typeof import('onnxruntime-node')
  const idle = memory()
  return {
    idle,
    open: async () => {
      const session = await ort.InferenceSession.create(job.model, (job.ortOptions ?? { intraOpNumThreads: job.threads }) as import('onnxruntime-node').InferenceSession.SessionOptions)
      return {
        feeds: (len, real) => {
          const a = arrays(ids, len, real ?? len)
          return { input_ids: new ort.Tensor('int64', a.ids, [1, len]), attention_mask: new ort.Tensor('int64', a.mask, [1, len]) }
        },
        run: async (feeds) => {
          const out = await session.run(feeds as Record<string, InstanceType<typeof ort.Tensor>>)
          return { lhs: out.last_hidden_state!.data as Float32Array, pooler: out.pooler_output!.data as Float32Array }
        },
        close: () => session.release(),
      }
    },
  }
}

function probe(o: Outputs, real: number): Probe {
  const hidden = o.pooler.length
  return [...o.lhs.subarray(0, 8), ...o.lhs.subarray((real - 1) * hidden, (real - 1) * hidden + 8), ...o.pooler.subarray(0, 8)]
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = now()
  const r = await fn()
  return [now() - t0, r]
}

async function steady(o: Opened, feeds: unknown, warmup: number, runs: number): Promise<{ samplesMs: number[]; last: Outputs }> {
  let last: Outputs | undefined
  for (let i = 0; i < warmup; i++) last = await o.run(feeds)
  const samplesMs: number[] = []
  for (let i = 0; i < runs; i++) {
    const [ms, out] = await timed(() => o.run(feeds))
    samplesMs.push(ms)
    last = out
  }
  return { samplesMs, last: last! }
}

async function lengthsJob(job: LengthsJob): Promise<ChildResult> {
  const { open } = await load(job)
  const [openMs, o] = await timed(open)
  try {
    const lengths: LengthResult[] = []
    for (const [k, length] of job.lengths.entries()) {
      const feeds = o.feeds(length)
      const warm = job.warm[k] ?? null
      let firstNewMs: number | undefined
      let firstRepeatMs: number | undefined
      if (job.newShapes) {
        const warmFeeds = warm === null ? undefined : o.feeds(warm)
        if (warmFeeds !== undefined) for (let i = 0; i < 2; i++) await o.run(warmFeeds)
        ;[firstNewMs] = await timed(() => o.run(feeds))
        // another shape in between (already seen: the warm shape, else the previous length), so that the
        // next call is at a seen shape but not the last one
        const between = warmFeeds ?? (k > 0 ? o.feeds(job.lengths[k - 1]!) : undefined)
        if (between !== undefined) {
          await o.run(between)
          ;[firstRepeatMs] = await timed(() => o.run(feeds))
        }
      }
      const { samplesMs, last } = await steady(o, feeds, Math.max(0, job.warmup - (job.newShapes ? 2 : 0)), job.runs)
      lengths.push({ length, warm, ...(firstNewMs === undefined ? {} : { firstNewMs }), ...(firstRepeatMs === undefined ? {} : { firstRepeatMs }), samplesMs, probe: probe(last, length) })
      const first = firstNewMs === undefined ? '' : `, first call ${firstNewMs.toFixed(1)} ms${firstRepeatMs === undefined ? '' : `, at a seen shape ${firstRepeatMs.toFixed(1)} ms`}`
      process.stderr.write(`  ${job.engine} seq ${length}: median ${medianOf(samplesMs).toFixed(1)} ms${first}\n`)
    }
    let padded: { realLength: number; samplesMs: number[]; probe: Probe } | undefined
    if (job.padded !== undefined) {
      const r = job.padded.realLength
      const { samplesMs, last } = await steady(o, o.feeds(job.maxLen, r), job.warmup, job.runs)
      padded = { realLength: r, samplesMs, probe: probe(last, r) }
    }
    return { ok: true, job: 'lengths', openMs, lengths, ...(padded === undefined ? {} : { padded }), ...(o.stats === undefined ? {} : { stats: o.stats() }), ...(o.buckets === undefined ? {} : { buckets: o.buckets() }), memory: memory() }
  } finally {
    await o.close()
  }
}

async function planForJob(job: PlanForJob): Promise<ChildResult> {
  const { open } = await load(job)
  const [openMs, o] = await timed(open)
  try {
    if (o.planFor === undefined) throw new Error('planfor: flexpipe only')
    const planFor = o.planFor
    const statsBefore = o.stats?.()
    const shapes: Array<{ length: number; path: PlanPath; freshMs: number; sameMs: number; otherMs?: number }> = []
    for (const [k, length] of job.shapes.entries()) {
      const [freshMs, path] = await timed(() => planFor(length))
      const [sameMs] = await timed(() => planFor(length))
      const prev = k > 0 ? job.shapes[k - 1]! : undefined
      const otherMs = prev === undefined ? undefined : (await timed(() => planFor(prev)))[0]
      shapes.push({ length, path, freshMs, sameMs, ...(otherMs === undefined ? {} : { otherMs }) })
    }
    // The same shapes, new again, on a second engine of this process: the JavaScript of the path is
    // compiled by now, as in a server past its first requests (the pass above pays that once per function).
    const warm = await open()
    const warmFreshMs: number[] = []
    try {
      for (const length of job.shapes) warmFreshMs.push((await timed(() => warm.planFor!(length)))[0])
    } finally {
      await warm.close()
    }
    return { ok: true, job: 'planfor', openMs, shapes, warmFreshMs, buckets: o.buckets?.() ?? [], statsBefore, statsAfter: o.stats?.() }
  } finally {
    await o.close()
  }
}

async function randomJob(job: RandomJob): Promise<ChildResult> {
  const { idle, open } = await load(job)
  const [openMs, o] = await timed(open)
  try {
    const opened = memory()
    const lengths = randomLengths(job.seed, job.calls, job.min, job.max)
    const feedsOf = new Map<number, unknown>()
    const points: Array<{ calls: number } & Memory> = [{ calls: 0, ...opened }]
    const callMs: number[] = []
    const t0 = now()
    for (const [i, length] of lengths.entries()) {
      let feeds = feedsOf.get(length)
      if (feeds === undefined) feedsOf.set(length, (feeds = o.feeds(length)))
      const [ms] = await timed(() => o.run(feeds))
      callMs.push(ms)
      const calls = i + 1
      if (calls % job.every === 0 || calls === job.calls) points.push({ calls, ...memory() })
      if (calls % 1000 === 0) process.stderr.write(`  ${job.engine} random: ${calls}/${job.calls} calls, RSS ${(points.at(-1)!.rss / 1e6).toFixed(1)} MB\n`)
    }
    const seconds = (now() - t0) / 1000
    const sorted = [...callMs].sort((a, b) => a - b)
    const p90 = sorted[Math.min(sorted.length - 1, Math.floor(0.9 * (sorted.length - 1)))] ?? NaN
    const mean = callMs.reduce((a, b) => a + b, 0) / Math.max(1, callMs.length)
    return { ok: true, job: 'random', idle, opened, openMs, points, callMs: { median: medianOf(callMs), p90, mean }, seconds, ...(o.stats === undefined ? {} : { stats: o.stats() }) }
  } finally {
    await o.close()
  }
}

function runJob(job: Job): Promise<ChildResult> {
  switch (job.job) {
    case 'lengths':
      return lengthsJob(job)
    case 'planfor':
      return planForJob(job)
    case 'random':
      return randomJob(job)
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const job = JSON.parse(process.argv[2] ?? '{}') as Job
  const result = await runJob(job).catch((err: unknown): ChildResult => ({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }))
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
