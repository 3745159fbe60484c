// SPDX-License-Identifier: Apache-2.0
// `flexpipe profile <package>`: measures this device (device-profile.ts) and, given a dev set, shard
// importance (dev-set.ts, seed §5.2) and every sub-model's accuracy at every bitwidth (beyond the
// seed); all are written into the package's meta.
import { writeFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { ArgumentError } from '../errors.js'
import { rewritePackageMeta } from '../package/index.js'
import { accuracy, profileImportance, profileSubModels, readDevSet, residentPlan } from './shard-importance.js'
import { profileKey, type ElasticDeviceProfile } from '../profile/elastic-device.js'
import { measureElasticDeviceProfile } from './measure-elastic-device.js'
import { binding } from '../native/binding.js'
import { readElasticPackage } from '../package/elastic-manifest.js'
import { ElasticRunner } from '../runtime/elastic-runner.js'
import { TextEncoder } from '../model/tokenize.js'

export interface ProfileOptions {
  readonly threads?: number
  /** Cold reads with O_DIRECT (default true). */
  readonly direct?: boolean
  readonly bandwidth?: number
  /** Sequence-length buckets (default 32, 64, the tokenizer's max_length). */
  readonly seqs?: readonly number[]
  /** Repetitions per measurement (default 7). */
  readonly repeats?: number
  /** A dev set (JSON lines {"text","label"}): measure shard importance too. */
  readonly dev?: string
  /** Use at most this many dev examples for importance (default all). */
  readonly devLimit?: number
  /** Also write the importance profile to this file (an importance.json to ship with the model). */
  readonly saveImportance?: string
  /**
   * With a dev set, also measure every sub-model's accuracy at every bitwidth (default true; N x M x
   * bitwidths evaluations, 5-10 minutes for the spam fixture on 2 cores).
   */
  readonly subModels?: boolean
  readonly onProgress?: (done: number, total: number, what: string) => void
}

export interface ProfileReport {
  readonly device: ElasticDeviceProfile
  readonly importance?: {
    ranking: Array<[number, number]>
    accuracy: number[][]
    lowAccuracy: number
    fullAccuracy: number
    /** subModelAccuracy[depth - 1][width - 1][bi]: every shard of the sub-model at bitwidths[bi]. */
    subModelAccuracy?: number[][][]
    bitwidths?: number[]
    devCount: number
    ms: number
  }
}

export async function profileElastic(path: string, options: ProfileOptions = {}): Promise<ProfileReport> {
  const pkg = await readElasticPackage(path)
  const threads = options.threads ?? Math.min(4, availableParallelism())
  const direct = options.direct ?? true
  const repeats = options.repeats ?? 7
  if (!(Number.isInteger(repeats) && repeats >= 1)) throw new ArgumentError(`repeats: expected a positive integer, got ${repeats}`)
  const encoder = new TextEncoder(pkg.tokenizer, pkg.config.maxPositions)
  const seqs = [...new Set(options.seqs ?? [32, 64, encoder.maxLength])].filter((s) => s <= encoder.maxLength).sort((a, b) => a - b)
  const x = await ElasticRunner.open(path, pkg.config, pkg.blobs, { threads, io: 'auto' })
  try {
    const key = profileKey(binding().info().isa, threads, direct, options.bandwidth, pkg.digest)
    const device = await measureElasticDeviceProfile(x, key, { seqs, repeats, direct, ...(options.bandwidth ? { bandwidth: options.bandwidth } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) })
    const meta: Record<string, unknown> = { ...pkg.meta }
    const others = (Array.isArray(pkg.meta.deviceProfiles) ? (pkg.meta.deviceProfiles as ElasticDeviceProfile[]) : []).filter(
      (p) => !(p.key.cpu === key.cpu && p.key.isa === key.isa && p.key.threads === key.threads && p.key.direct === key.direct && p.key.bandwidth === key.bandwidth),
    )
    meta.deviceProfiles = [...others, device]
    let importance: ProfileReport['importance']
    if (options.dev !== undefined) {
      const t0 = performance.now()
      const dev = await readDevSet(options.dev, encoder, pkg.config.labels.length, options.devLimit)
      const seq = encoder.maxLength
      const imp = await profileImportance(x, dev, seq, options.onProgress)
      const top = pkg.meta.bitwidths as number[]
      const full = Array.from({ length: pkg.config.layers }, () => new Array<number>(pkg.config.heads).fill(top[top.length - 1]!))
      const fullAccuracy = await accuracy(x, residentPlan(pkg.config.layers, pkg.config.heads, seq, full), dev)
      const table = options.subModels === false ? {} : { subModelAccuracy: await profileSubModels(x, dev, seq, options.onProgress), bitwidths: [...x.bitwidths] }
      importance = { ...imp, fullAccuracy, ...table, devCount: dev.length, ms: performance.now() - t0 }
      meta.importance = importance
      if (options.saveImportance !== undefined) await writeFile(options.saveImportance, JSON.stringify(importance) + '\n')
    }
    await rewritePackageMeta(path, meta)
    return { device, ...(importance ? { importance } : {}) }
  } finally {
    x.dispose()
  }
}
