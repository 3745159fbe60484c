// SPDX-License-Identifier: Apache-2.0
// One engine in one fresh process, for bench:zoo (zoo.bench.ts spawns it; nothing else runs in it).
//
//   node dist/bench/zoo/zoo-child.js '{"job":"time","engine":"flexpipe","model":"m.onnx","threads":2,"runs":10,"warmup":3,
//     "inputs":[{"name":"input","dims":[1,3,224,224],"fill":"uniform","seed":1}]}'
//
// Jobs:
//   time     open, `warmup` untimed runs, then `runs` timed runs back to back: latency after warm-up.
//   cold     the first result of a fresh process: the engine's module is imported only now (nothing
//            of it is loaded before), then open and one run. Reports the wall-clock instants of the
//            open and the first result; the parent measures from the instant it spawned the process.
//   outputs  one run; writes every output as raw float32 to `outDir/<engine>-<i>.bin` with a JSON
//            index (conformance is compared by the parent, engine against engine, without either
//            engine's module loaded twice in one process).
//   profile  flexpipe only: `runs` profiled runs (Engine.inferProfiled), median ms per operator type.
// Prints one JSON line (the last line of stdout). Only node: modules are imported statically, so the
// cold job measures the engine's own import.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { seeded } from '../seeded.js'

export interface ChildJob {
  readonly job: 'time' | 'cold' | 'outputs' | 'profile'
  readonly engine: 'flexpipe' | 'ort'
  readonly model: string
  readonly inputs: readonly InputSpec[]
  readonly threads: number
  readonly runs?: number
  readonly warmup?: number
  /** time: stop the timed runs after this many ms (at no fewer than 3 runs). */
  readonly budgetMs?: number
  readonly outDir?: string
}

/** One model input: seeded uniform floats in [-1, 1), token ids in [1, tokens) (seeded), or ones. */
export interface InputSpec {
  readonly name: string
  readonly dims: readonly number[]
  readonly fill: 'uniform' | 'ones' | { readonly tokens: number }
  readonly seed: number
}

/** What a child prints. Times in ms; `*At` are wall-clock instants (performance.timeOrigin + now). */
export interface ChildResult {
  readonly ok: boolean
  readonly error?: string
  readonly samplesMs?: number[]
  readonly openMs?: number
  readonly firstRunMs?: number
  readonly openedAt?: number
  readonly firstResultAt?: number
  readonly outputs?: Array<{ name: string; dims: number[]; file: string }>
  readonly opTypes?: Array<{ opType: string; ms: number; count: number }>
  readonly vmHWMBytes?: number
}

type Feed = { dtype: 'float32'; dims: readonly number[]; data: Float32Array } | { dtype: 'int64'; dims: readonly number[]; data: BigInt64Array }
type Feeds = Record<string, Feed>
type Outputs = Record<string, { dims: readonly number[]; data: ArrayLike<number | bigint> }>

const repoRoot = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..')
const wallNow = (): number => performance.timeOrigin + performance.now()


export function makeFeeds(inputs: readonly InputSpec[]): Feeds {
  const feeds: Feeds = {}
  for (const spec of inputs) {
    const n = spec.dims.reduce((p, d) => p * d, 1)
    const rand = seeded(spec.seed)
    const fill = spec.fill
    if (fill === 'uniform') feeds[spec.name] = { dtype: 'float32', dims: spec.dims, data: Float32Array.from({ length: n }, () => rand() * 2 - 1) }
    else if (fill === 'ones') feeds[spec.name] = { dtype: 'int64', dims: spec.dims, data: new BigInt64Array(n).fill(1n) }
    else feeds[spec.name] = { dtype: 'int64', dims: spec.dims, data: BigInt64Array.from({ length: n }, () => BigInt(1 + Math.floor(rand() * (fill.tokens - 1)))) }
  }
  return feeds
}

function vmHWM(): number | undefined {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
  return m ? Number(m[1]) * 1024 : undefined
}

interface Opened {
  readonly run: (feeds: Feeds) => Promise<Outputs>
  readonly profile?: (feeds: Feeds) => Promise<Array<{ opType: string; ms: number }>>
  readonly close: () => Promise<void>
}

async function openEngine(job: ChildJob): Promise<Opened> {
  if (job.engine === 'flexpipe') {
    const fp = (await import(pathToFileURL(join(repoRoot, 'dist', 'flexpipe.js')).href)) as typeof import('../../lib/index.js')
    const engine = await fp.open(job.model, { threads: job.threads })
    if (!(engine instanceof fp.Engine)) throw new Error(`${job.model} opened as ${engine.constructor.name}, expected an ONNX model`)
    return {
      run: (feeds) => engine.infer(feeds),
      profile: async (feeds) => (await engine.inferProfiled(feeds)).ops.map((o) => ({ opType: o.opType, ms: o.ms })),
      close: () => engine.close(),
    }
  }
  const ort = (await import('onnxruntime-node')) as typeof import('onnxruntime-node')
  const session = await ort.InferenceSession.create(job.model, { intraOpNumThreads: job.threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' })
  return {
    run: async (feeds) => {
      const f: Record<string, InstanceType<typeof ort.Tensor>> = {}
      for (const [name, t] of Object.entries(feeds)) f[name] = t.dtype === 'float32' ? new ort.Tensor('float32', t.data, t.dims) : new ort.Tensor('int64', t.data, t.dims)
      const out = await session.run(f)
      return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, { dims: v.dims, data: v.data as Float32Array }]))
    },
    close: () => session.release(),
  }
}

async function timedRuns(o: Opened, feeds: Feeds, n: number, budgetMs = Infinity): Promise<number[]> {
  const ms: number[] = []
  const start = performance.now()
  for (let i = 0; i < n && (i < 3 || performance.now() - start < budgetMs); i++) {
    const t0 = performance.now()
    await o.run(feeds)
    ms.push(performance.now() - t0)
  }
  return ms
}

async function runJob(job: ChildJob): Promise<ChildResult> {
  const start = performance.now()
  const o = await openEngine(job)
  const openedAt = wallNow()
  const openMs = performance.now() - start
  try {
    const feeds = makeFeeds(job.inputs)
    const t0 = performance.now()
    const first = await o.run(feeds)
    const firstResultAt = wallNow()
    const firstRunMs = performance.now() - t0
    switch (job.job) {
      case 'cold':
        return { ok: true, openedAt, firstResultAt, openMs, firstRunMs }
      case 'time':
        await timedRuns(o, feeds, Math.max(0, (job.warmup ?? 3) - 1), (job.budgetMs ?? Infinity) / 4)
        return { ok: true, openMs, firstRunMs, samplesMs: await timedRuns(o, feeds, job.runs ?? 10, job.budgetMs), vmHWMBytes: vmHWM() }
      case 'outputs': {
        const outputs = Object.entries(first).map(([name, t], i) => {
          const file = join(job.outDir!, `${job.engine}-${i}.bin`)
          writeFileSync(file, Buffer.from(Float32Array.from(t.data as ArrayLike<number | bigint>, Number).buffer))
          return { name, dims: [...t.dims], file }
        })
        return { ok: true, openMs, firstRunMs, outputs }
      }
      case 'profile': {
        if (o.profile === undefined) throw new Error('profile: flexpipe only')
        const runs: Array<Map<string, { ms: number; count: number }>> = []
        for (let r = 0; r < (job.runs ?? 5); r++) {
          const byType = new Map<string, { ms: number; count: number }>()
          for (const op of await o.profile(feeds)) {
            const e = byType.get(op.opType) ?? { ms: 0, count: 0 }
            byType.set(op.opType, { ms: e.ms + op.ms, count: e.count + 1 })
          }
          runs.push(byType)
        }
        const types = [...runs[0]!.keys()]
        const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
        const opTypes = types.map((opType) => ({ opType, ms: med(runs.map((r) => r.get(opType)?.ms ?? 0)), count: runs[0]!.get(opType)!.count })).sort((a, b) => b.ms - a.ms)
        return { ok: true, openMs, firstRunMs, opTypes }
      }
    }
  } finally {
    await o.close()
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const job = JSON.parse(process.argv[2] ?? '{}') as ChildJob
  const result = await runJob(job).catch((err: unknown): ChildResult => ({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }))
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
