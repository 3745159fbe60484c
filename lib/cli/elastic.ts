// SPDX-License-Identifier: Apache-2.0
// The elastic-transformer commands: prepare --elastic, profile, classify, and the demo (the README's
// main job: classify bundled emails with the spam-encoder fixture under a target latency).
import cliProgress from 'cli-progress'
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { ArgumentError, DeviceProfileError } from '../errors.js'
import { readElasticPackage } from '../package/elastic-manifest.js'
import { ElasticEngine } from '../runtime/elastic-engine.js'
import { prepareElastic } from '../prepare/prepare-elastic.js'
import { profileElastic } from '../prepare/profile-elastic.js'
import { morePreferred } from '../plan/elastic/accuracy-plan.js'
import type { ElasticPlan } from '../plan/elastic/index.js'
import { cacheDir } from './cache-dir.js'
import { formatMB } from './sizes.js'
import { packageRoot } from '../package-root.js'

const root = packageRoot
export const fixtureDir = join(root, 'test', 'fixtures', 'spam-encoder')

function progressBar(label: string): { update: (done: number, total: number, what: string) => void; stop: () => void } {
  const bar = new cliProgress.SingleBar(
    { format: `${label} |{bar}| {value}/{total}  {what}`, stream: process.stderr, hideCursor: true, noTTYOutput: false, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  )
  let started = false
  return {
    update: (done, total, what) => {
      if (!started) {
        bar.start(total, 0, { what })
        started = true
      }
      bar.setTotal(total)
      bar.update(done, { what: what.length > 40 ? `…${what.slice(-39)}` : what })
    },
    stop: () => {
      if (started) bar.stop()
      started = false
    },
  }
}

export async function runPrepareElastic(modelDir: string, output: string | undefined, dev: string | undefined, threads: number | undefined): Promise<void> {
  if (output === undefined || !output.endsWith('.fpk')) throw new ArgumentError('prepare --elastic: give the package path with -o model.fpk')
  const bar = progressBar('prepare --elastic')
  try {
    const r = await prepareElastic(modelDir, output, { onProgress: bar.update })
    bar.stop()
    const sizes = Object.entries(r.shardBytes).map(([b, n]) => `${b === '32' ? 'fp32' : `${b}-bit`} ${(n / 1024).toFixed(0)} KiB`).join(', ')
    console.log(`${output}: ${r.layers} layers x ${r.shardsPerLayer} shards at ${r.bitwidths.join('/')} bits; shard ${sizes}; outliers ${(r.outlierFraction * 100).toFixed(3)}%; resident ${formatMB(r.residentBytes)}; package ${formatMB(r.packageBytes)}; ${(r.ms / 1000).toFixed(1)} s`)
    if (dev !== undefined) await runProfile(output, { dev, ...(threads ? { threads } : {}) })
  } finally {
    bar.stop()
  }
}

export interface ProfileCliOptions {
  readonly threads?: number
  readonly bandwidth?: number
  readonly buffered?: boolean
  readonly dev?: string
  readonly devLimit?: number
  readonly saveImportance?: string
}

export async function runProfile(path: string, o: ProfileCliOptions): Promise<void> {
  const bar = progressBar('profile')
  try {
    const r = await profileElastic(path, {
      ...(o.threads ? { threads: o.threads } : {}),
      ...(o.bandwidth ? { bandwidth: o.bandwidth } : {}),
      direct: o.buffered !== true,
      ...(o.dev ? { dev: o.dev } : {}),
      ...(o.devLimit ? { devLimit: o.devLimit } : {}),
      ...(o.saveImportance ? { saveImportance: o.saveImportance } : {}),
      onProgress: bar.update,
    })
    bar.stop()
    const d = r.device
    for (const c of d.compute) {
      console.log(`compute seq ${c.seq}: layer with 1..${c.layerMs.length - 1} shards ${c.layerMs.slice(1).map((v) => v.toFixed(2)).join(' / ')} ms; fixed ${c.fixedMs.toFixed(2)} ms`)
    }
    console.log(`io per shard: ${Object.entries(d.shardReadMs).map(([b, ms]) => `${b === '32' ? 'fp32' : `${b}-bit`} ${ms.toFixed(3)} ms`).join(', ')}`)
    console.log(`io (${d.key.direct ? 'O_DIRECT' : 'buffered'}${d.key.bandwidth ? `, throttled to ${formatMB(d.key.bandwidth)}/s` : ''}): ${d.readMsPerJob.toFixed(3)} ms per job + ${(d.readMsPerByte * 1e6).toFixed(3)} ms per MB; ${d.key.threads} threads, ${d.key.cpu}`)
    if (r.importance) {
      const i = r.importance
      console.log(`importance on ${i.devCount} dev examples: all shards 2-bit ${(i.lowAccuracy * 100).toFixed(1)}%, full ${(i.fullAccuracy * 100).toFixed(1)}%; most important shards ${i.ranking.slice(0, 6).map(([l, h]) => `L${l}S${h}`).join(' ')} (${(i.ms / 1000).toFixed(1)} s)`)
      if (i.subModelAccuracy && i.bitwidths) {
        // Ties as the planner breaks them (morePreferred).
        let best: { depth: number; width: number; bi: number } | undefined
        let bestA = -Infinity
        i.subModelAccuracy.forEach((row, d) => row.forEach((cells, w) => cells.forEach((a, bi) => {
          const c = { depth: d + 1, width: w + 1, bi }
          if (best === undefined || morePreferred(c, a, best, bestA)) [best, bestA] = [c, a]
        })))
        const b = best!
        const bits = i.bitwidths[b.bi] === 32 ? 'fp32' : `${i.bitwidths[b.bi]} bits`
        console.log(`sub-model table: ${i.subModelAccuracy.length} x ${i.subModelAccuracy[0]!.length} sub-models x ${i.bitwidths.length} bitwidths; most accurate ${b.depth} x ${b.width} at ${bits} (${(bestA * 100).toFixed(1)}%)`)
      }
    }
  } finally {
    bar.stop()
  }
}

export function describePlan(p: ElasticPlan): string {
  if (p.planner === 'full-model') return `full model: ${p.depth} layers x ${p.width} shards at fp32, preload ${(p.preloadBytes / 1024).toFixed(0)} KiB, loads ${(p.loadBytes / 1024).toFixed(0)} KiB per inference, no target`
  const hist = Object.entries(p.bitsHistogram).filter(([, n]) => n > 0).map(([b, n]) => `${n}x${b === '32' ? 'fp32' : `${b}b`}`).join(' ')
  return `${p.planner} plan: ${p.depth} layers x ${p.width} shards, shards ${hist}, preload ${(p.preloadBytes / 1024).toFixed(0)} KiB (${p.preload.length} shards), loads ${(p.loadBytes / 1024).toFixed(0)} KiB per inference, modelled ${p.modelledMs.toFixed(1)} ms <= T ${p.targetMs} ms`
}

export interface ClassifyCliOptions {
  readonly targetMs: number
  readonly preloadBytes?: number
  readonly threads?: number
  readonly bandwidth?: number
  readonly buffered?: boolean
}

export async function runClassify(path: string, texts: string[], o: ClassifyCliOptions): Promise<void> {
  const engine = await ElasticEngine.open(path, {
    targetLatencyMs: o.targetMs,
    ...(o.preloadBytes !== undefined ? { preloadBytes: o.preloadBytes } : {}),
    ...(o.threads ? { threads: o.threads } : {}),
    ...(o.bandwidth ? { bandwidth: o.bandwidth } : {}),
    direct: o.buffered !== true,
  })
  try {
    console.log(describePlan(engine.plan))
    for (const r of await engine.classify(texts)) {
      console.log(`${r.label.padEnd(6)} p=${r.score.toFixed(3)}  ${r.ms.toFixed(1)} ms  ${r.tokens} tokens${r.truncated ? ' (truncated)' : ''}`)
    }
  } finally {
    await engine.close()
  }
}

/** The demo: prepares and profiles the fixture once (cached), then classifies bundled dev emails under T. */
export async function runElasticDemo(o: { threads?: number; targetMs?: number; preloadBytes?: number }): Promise<void> {
  const cache = await cacheDir('demo')
  const pkg = join(cache, 'spam-encoder.fpk')
  // Fresh when newer than every fixture file prepare reads (importance.json may be absent).
  const inputs = ['model.safetensors', 'config.json', 'tokenizer.json', 'importance.json']
  const newestInput = Math.max(...(await Promise.all(inputs.map((f) => stat(join(fixtureDir, f)).then((s) => s.mtimeMs, () => 0)))))
  const fresh = await stat(pkg).then(
    (s) => s.mtimeMs >= newestInput,
    () => false,
  )
  if (!fresh) {
    console.log(`preparing ${pkg} from ${fixtureDir} (shards at 2..6 bits and fp32; shard importance from the fixture's importance.json)`)
    await runPrepareElastic(fixtureDir, pkg, undefined, o.threads)
  }
  const lines = (await readFile(join(fixtureDir, 'dev.jsonl'), 'utf8')).split('\n').filter((l) => l.trim() !== '')
  const emails = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => JSON.parse(lines[Math.floor((i * lines.length) / 8)]!) as { text: string; label: number })
  const open = async (targetMs: number): Promise<ElasticEngine> => {
    try {
      return await ElasticEngine.open(pkg, { targetLatencyMs: targetMs, preloadBytes: o.preloadBytes ?? 1 << 20, ...(o.threads ? { threads: o.threads } : {}) })
    } catch (err) {
      if (!(err instanceof DeviceProfileError)) throw err
      console.log(`measuring this device (${err.message.split(';')[0]})`)
      await runProfile(pkg, { ...(o.threads ? { threads: o.threads } : {}) })
      return ElasticEngine.open(pkg, { targetLatencyMs: targetMs, preloadBytes: o.preloadBytes ?? 1 << 20, ...(o.threads ? { threads: o.threads } : {}) })
    }
  }
  const meta = (await readElasticPackage(pkg)).meta
  const imp = meta.importance as { fullAccuracy?: number } | undefined
  // T relative to this machine: by default 60% of the full model's modelled time, but never below 1.2x
  // the smallest target the planner meets here (on a fast machine 60% can be below it).
  let engine = await open(o.targetMs ?? 1000)
  const fullMs = engine.plan.modelledMs
  const targetMs = o.targetMs ?? Math.max(Math.round(fullMs * 0.6), Math.ceil((engine.minimumTargetMs ?? 0) * 1.2))
  if (o.targetMs === undefined) {
    await engine.close()
    engine = await open(targetMs)
  }
  try {
    console.log(`spam-encoder: ${(await stat(pkg)).size} bytes package, dev accuracy of the full model ${imp?.fullAccuracy ? `${(imp.fullAccuracy * 100).toFixed(1)}%` : 'n/a'}`)
    console.log(`target latency T = ${targetMs} ms (the full model needs ~${fullMs.toFixed(1)} ms here); preload buffer ${formatMB(o.preloadBytes ?? 1 << 20)}; cold O_DIRECT reads`)
    console.log(describePlan(engine.plan))
    const results = await engine.classify(emails.map((e) => e.text))
    results.forEach((r, i) => {
      const e = emails[i]!
      const subject = e.text.replace(/\s+/g, ' ').slice(0, 60)
      console.log(`${r.label.padEnd(5)} p=${r.score.toFixed(3)} ${r.ms.toFixed(1).padStart(6)} ms  [truth ${engine.labels[e.label]}]  ${subject}`)
    })
    const within = results.filter((r) => r.ms <= targetMs * 1.05).length
    console.log(`${within}/${results.length} within 1.05 x T`)
  } finally {
    await engine.close()
  }
}
