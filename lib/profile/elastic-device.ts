// SPDX-License-Identifier: Apache-2.0
// The device profile of an elastic package (STI seed §5.2, "hardware capability"): measured on this
// machine by `flexpipe profile`, stored in the package's meta (deviceProfiles), read by the planner.
//
//   compute  per sequence-length bucket: the delay of one layer with m = 1..M shards, measured as the
//            executor runs it (dequantization of 6-bit shards with OpenMP + the partial layer, the
//            JavaScript hop between lanes included), and the fixed part (embeddings, pooler,
//            classifier, per-inference overhead) = a 1-layer inference minus its layer;
//   io       one IO job per layer as the executor issues it (a readFile of that layer's shard
//            versions, O_DIRECT when `direct`, throttled when `bandwidth`) at every stored bitwidth:
//            per-shard delays IO(b) and a least-squares line readMsPerJob + bytes * readMsPerByte
//            (what the planner uses: plans mix bitwidths within a job).
// Every figure is the median of repeated measurements. A profile is valid only for the machine
// (CPU model, ISA), thread count, IO mode and package content it was measured with; `profileKey` says
// which, and `findDeviceProfile` rejects a stale one with the command that makes a new one.
import { cpus } from 'node:os'
import { ArgumentError, DeviceProfileError } from '../errors.js'
import { binding } from '../native/binding.js'
import type { BlobEntry } from '../package/index.js'
import { simulatePipeline, type ElasticProfile } from '../plan/elastic/index.js'
import type { EncoderConfig } from '../model/encoder-config.js'
import type { ElasticExecutor, RunPlan } from '../runtime/elastic-executor.js'

export interface ComputeProfile {
  readonly seq: number
  /** layerMs[m] for m = 1..M (index 0 unused, 0). */
  readonly layerMs: readonly number[]
  readonly fixedMs: number
  /**
   * The on-demand embedding read (the pages of `seq` distinct token rows, the first IO of every
   * inference; compute cannot start before it): 0 when the executor keeps the table resident.
   */
  readonly embeddingIoMs: number
}

export interface DeviceProfile {
  readonly key: ProfileKey
  readonly created: string
  readonly compute: readonly ComputeProfile[]
  readonly readMsPerByte: number
  readonly readMsPerJob: number
  /** The measured jobs (one layer, all shards, one bitwidth each): [bytes, ms] medians. */
  readonly readSamples: ReadonlyArray<readonly [number, number]>
  /** IO delay of one shard per bitwidth (its layer job's median / shards): the seed's IO(b). */
  readonly shardReadMs: Readonly<Record<string, number>>
  /**
   * The same line through the 95th percentiles of the job times. The planner models IO with it:
   * storage is the noisiest part of an inference (here p95/median 1.25 for fp32 full-model runs
   * against 1.09 at 6 bits), so planning IO at its p95 keeps the IO lane from being the tail, and the
   * IO planner does not buy fp32 shards (no more accurate than 6-bit ones) with bandwidth it only has
   * at the median. Absent in older profiles (the median line is used).
   */
  readonly readP95?: { readonly msPerByte: number; readonly msPerJob: number; readonly samples: ReadonlyArray<readonly [number, number]> }
  /**
   * How real pipelined inferences compare with what the figures above model (IO and compute slow each
   * other down when they overlap; the machine jitters): `scale` = measured median / modelled time, the
   * largest over an IO-heavy (fp32) and a light (6-bit) full-model run; `jitter` = p95 / median of
   * the light run (IO's tail is modelled by `readP95`). The planner multiplies every delay by `scale`
   * and plans for T * min(1, 1.05 / jitter), so that 95% of inferences finish within 1.05 T; the
   * engine's online calibration then replaces `jitter` with what it measures.
   */
  readonly calibration: { readonly scale: number; readonly jitter: number; readonly runs: ReadonlyArray<{ bits: number; modelledMs: number; medianMs: number; p95Ms: number }> }
}

export interface ProfileKey {
  readonly cpu: string
  readonly isa: string
  readonly threads: number
  readonly direct: boolean
  /** Throttle in bytes/s, 0 = none. */
  readonly bandwidth: number
  /** Digest of the package's shard blobs (their CRCs): a re-prepared package invalidates the profile. */
  readonly shards: string
}

export function profileKey(threads: number, direct: boolean, bandwidth: number | undefined, shardDigest: string): ProfileKey {
  return { cpu: cpus()[0]?.model ?? 'unknown', isa: binding().info().isa, threads, direct, bandwidth: bandwidth ?? 0, shards: shardDigest }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** The profile of `key` among the package's, or a DeviceProfileError saying why there is none. */
export function findDeviceProfile(stored: unknown, key: ProfileKey, packagePath: string): DeviceProfile {
  const list = Array.isArray(stored) ? (stored as DeviceProfile[]) : []
  const how = `run \`flexpipe profile ${packagePath} --threads ${key.threads}${key.direct ? '' : ' --buffered'}${key.bandwidth ? ` --bandwidth ${key.bandwidth}` : ''}\``
  if (list.length === 0) throw new DeviceProfileError(`package ${packagePath} has no device profile; ${how} on this machine first`)
  const same = (p: DeviceProfile): boolean =>
    p.key.cpu === key.cpu && p.key.isa === key.isa && p.key.threads === key.threads && p.key.direct === key.direct && p.key.bandwidth === key.bandwidth
  const hit = list.find(same)
  if (hit === undefined) {
    const have = list.map((p) => `${p.key.threads} threads, ${p.key.direct ? 'O_DIRECT' : 'buffered'}${p.key.bandwidth ? ` @${p.key.bandwidth} B/s` : ''} on ${p.key.cpu} (${p.key.isa})`).join('; ')
    throw new DeviceProfileError(`package ${packagePath} has no device profile for ${key.threads} threads, ${key.direct ? 'O_DIRECT' : 'buffered'} IO${key.bandwidth ? ` at ${key.bandwidth} B/s` : ''} on this machine (${key.cpu}, ${key.isa}); it has: ${have}. ${how}`)
  }
  if (hit.key.shards !== key.shards) throw new DeviceProfileError(`the device profile of ${packagePath} is stale (measured on other shard blobs: the package was prepared again); ${how}`)
  return hit
}

/**
 * The planner's profile for sequence length `seq`: the device's delays (times the calibration scale
 * when `calibrated`) and the package's exact blob sizes (padded, as the IO jobs read them).
 */
export function plannerProfile(
  config: EncoderConfig,
  blobs: ReadonlyMap<string, BlobEntry>,
  device: DeviceProfile,
  seq: number,
  bitwidths: readonly number[],
  calibrated = true,
): ElasticProfile {
  const comp = computeFor(device, seq)
  if (comp === undefined) throw new ArgumentError(`the device profile has no compute figures for sequence length ${seq} (it has ${device.compute.map((c) => c.seq).join(', ')})`)
  const k = calibrated ? (device.calibration?.scale ?? 1) : 1
  const p95 = calibrated && device.readP95 !== undefined
  const shardBytes = Array.from({ length: config.layers }, (_, l) =>
    Array.from({ length: config.heads }, (_, h) => bitwidths.map((b) => blobs.get(`L${l}.S${h}.b${b}`)?.paddedLength ?? 0)),
  )
  return {
    layers: config.layers,
    shardsPerLayer: config.heads,
    bitwidths,
    shardBytes,
    readMsPerByte: (p95 ? Math.max(device.readP95!.msPerByte, device.readMsPerByte) : device.readMsPerByte) * k,
    readMsPerJob: (p95 ? Math.max(device.readP95!.msPerJob, device.readMsPerJob) : device.readMsPerJob) * k,
    layerComputeMs: comp.layerMs.map((v) => v * k),
    fixedMs: comp.fixedMs * k,
  }
}

/** Compute delays of the bucket that fits `seq` (the smallest bucket >= seq). */
export function computeFor(p: DeviceProfile, seq: number): ComputeProfile | undefined {
  return [...p.compute].sort((a, b) => a.seq - b.seq).find((c) => c.seq >= seq)
}

export interface MeasureOptions {
  readonly seqs: readonly number[]
  readonly repeats: number
  readonly direct: boolean
  readonly bandwidth?: number
  readonly onProgress?: (done: number, total: number, what: string) => void
}

/** Measures compute and IO on an open executor (it re-applies plans; the caller re-applies its own after). */
export async function measureDeviceProfile(
  x: ElasticExecutor,
  key: ProfileKey,
  o: MeasureOptions,
): Promise<DeviceProfile> {
  const c = x.config
  const M = c.heads
  const L = c.layers
  const total = o.seqs.length * M + x.bitwidths.length + 2
  let done = 0
  const ids = (seq: number): number[] => Array.from({ length: seq }, (_, i) => (i * 7919) % c.vocab)
  const compute: ComputeProfile[] = []
  for (const seq of o.seqs) {
    const layerMs = [0]
    const fixed: number[] = []
    for (let m = 1; m <= M; m++) {
      // Every layer of the model at width m, shards resident: each layer's compute as it runs in a
      // whole inference (dequantization of 6-bit shards included), and the rest is the fixed part.
      const plan: RunPlan = { depth: L, width: m, seq, bits: Array.from({ length: L }, () => new Array(m).fill(6)), preloaded: Array.from({ length: L }, () => new Array(m).fill(true)) }
      await x.apply(plan)
      await x.run(ids(seq)) // warm-up
      const layer: number[] = []
      for (let r = 0; r < o.repeats; r++) {
        const { times } = await x.run(ids(seq))
        let sum = 0
        for (let l = 0; l < L; l++) {
          const ms = times.computeEndMs[l]! - times.computeStartMs[l]!
          layer.push(ms)
          sum += ms
        }
        fixed.push(times.totalMs - sum)
      }
      layerMs.push(median(layer))
      o.onProgress?.(++done, total, `compute seq ${seq}, ${m} shard${m > 1 ? 's' : ''}`)
    }
    // The embedding read, worst case: every token on its own page, spread over the table.
    let embeddingIoMs = 0
    if (x.onDemand) {
      const spread = Array.from({ length: seq }, (_, i) => Math.floor(((i + 0.5) * c.vocab) / seq))
      const e: number[] = []
      for (let r = 0; r < o.repeats; r++) e.push((await x.run(spread, { direct: o.direct, ...(o.bandwidth ? { bandwidth: o.bandwidth } : {}) })).times.embeddingIoMs)
      embeddingIoMs = median(e)
    }
    compute.push({ seq, layerMs, fixedMs: median(fixed), embeddingIoMs })
  }
  // IO: one job per layer of all M shards, at every stored bitwidth; a least-squares line through
  // the (bytes, ms) medians gives the per-job and per-byte delays the planner uses.
  const samples: Array<[number, number]> = []
  const shardMs: Record<string, number> = {}
  const samplesP95: Array<[number, number]> = []
  for (const bits of x.bitwidths) {
    const plan: RunPlan = {
      depth: L,
      width: M,
      seq: o.seqs[0]!,
      bits: Array.from({ length: L }, () => new Array(M).fill(bits)),
      preloaded: Array.from({ length: L }, () => new Array(M).fill(false)),
    }
    await x.apply(plan)
    const ms: number[] = []
    let bytes = 0
    for (let r = 0; r < Math.max(5, o.repeats); r++) {
      for (let l = 0; l < L; l++) {
        const t = await x.timeJob(l, { direct: o.direct, ...(o.bandwidth ? { bandwidth: o.bandwidth } : {}) })
        ms.push(t.ms)
        bytes = t.bytes
      }
    }
    samples.push([bytes, median(ms)])
    shardMs[bits] = median(ms) / M
    const sorted = [...ms].sort((a, b) => a - b)
    samplesP95.push([bytes, sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)]!])
    o.onProgress?.(++done, total, `IO ${bits === 32 ? 'fp32' : `${bits}-bit`} shards`)
  }
  const line = fitLine(samples)
  const lineP95 = fitLine(samplesP95)
  const uncalibrated: DeviceProfile = { key, created: new Date().toISOString(), compute, readMsPerByte: line.msPerByte, readMsPerJob: line.msPerJob, readSamples: samples, shardReadMs: shardMs, readP95: { ...lineP95, samples: samplesP95 }, calibration: { scale: 1, jitter: 1, runs: [] } }
  // Calibration: whole pipelined inferences of the full model, every shard read, at the largest bucket.
  const seq = o.seqs[o.seqs.length - 1]!
  const runs: Array<{ bits: number; modelledMs: number; medianMs: number; p95Ms: number }> = []
  for (const bits of [32, 6].filter((b) => x.bitwidths.includes(b))) {
    const shards = Array.from({ length: L }, () => Array.from({ length: M }, (_, shard) => ({ shard, bits, preloaded: false })))
    const profile = plannerProfile(x.config, x.blobEntries, uncalibrated, seq, x.bitwidths, false)
    const comp = computeFor(uncalibrated, seq)!
    const modelledMs = simulatePipeline(profile, { targetMs: Infinity, shards }) + comp.embeddingIoMs
    await x.apply({ depth: L, width: M, seq, bits: shards.map((r) => r.map((s) => s.bits)), preloaded: shards.map((r) => r.map(() => false)) })
    const read = { direct: o.direct, ...(o.bandwidth ? { bandwidth: o.bandwidth } : {}) }
    await x.run(ids(seq), read)
    await x.run(ids(seq), read)
    const ms: number[] = []
    for (let r = 0; r < Math.max(20, o.repeats * 3); r++) ms.push((await x.run(ids(seq), read)).times.totalMs)
    ms.sort((a, b) => a - b)
    runs.push({ bits, modelledMs, medianMs: median(ms), p95Ms: ms[Math.min(ms.length - 1, Math.ceil(0.95 * ms.length) - 1)]! })
    o.onProgress?.(++done, total, `calibration, ${bits === 32 ? 'fp32' : `${bits}-bit`} shards`)
  }
  const scale = Math.max(1, ...runs.map((r) => r.medianMs / r.modelledMs))
  // The spread of the light (6-bit, compute-bound) run: storage's own tail is in the p95 IO line, and
  // the IO-heavy run's p95 is one or two read stalls (here once 79 ms against a 25 ms median), which
  // would make the first plans aim at a third of T. The engine's online calibration measures the rest.
  const light = runs.find((r) => r.bits !== 32) ?? runs[0]!
  const jitter = Math.max(1, light.p95Ms / light.medianMs)
  return { ...uncalibrated, calibration: { scale, jitter, runs } }
}

/** Least-squares line ms = msPerJob + bytes * msPerByte through (bytes, ms) points, both terms >= 0. */
function fitLine(samples: ReadonlyArray<readonly [number, number]>): { msPerByte: number; msPerJob: number } {
  const n = samples.length
  const mb = samples.reduce((a, [b]) => a + b, 0) / n
  const mt = samples.reduce((a, [, t]) => a + t, 0) / n
  const sxx = samples.reduce((a, [b]) => a + (b - mb) ** 2, 0)
  const sxy = samples.reduce((a, [b, t]) => a + (b - mb) * (t - mt), 0)
  const msPerByte = sxx > 0 ? Math.max(0, sxy / sxx) : mt / Math.max(1, mb)
  return { msPerByte, msPerJob: Math.max(0, mt - msPerByte * mb) }
}
