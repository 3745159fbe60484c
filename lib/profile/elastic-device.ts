// SPDX-License-Identifier: Apache-2.0
// The device profile of an elastic package (STI seed §5.2, "hardware capability"): measured on this
// machine by `flexpipe profile` (lib/prepare/measure-elastic-device.ts), stored in the package's meta
// (deviceProfiles), read by the planner.
//
//   compute  per sequence-length bucket: the delay of one layer with m = 1..M shards, measured in
//            whole inferences on the native gate (from the layer's first op start to its last op's
//            end: dequantization of 6-bit shards with OpenMP + the partial layer), and the fixed part
//            (embeddings, pooler, classifier, per-inference overhead) = the inference minus its layers;
//   io       one IO job per layer as the runner reads it (a readFile of that layer's shard
//            versions, O_DIRECT when `direct`, throttled when `bandwidth`) at every stored bitwidth:
//            per-shard delays IO(b) and a least-squares line readMsPerJob + bytes * readMsPerByte
//            (what the planner uses: plans mix bitwidths within a job).
// Every figure is the median of repeated measurements. A profile is valid only for the machine
// (CPU model, ISA), thread count, IO mode and package content it was measured with; `profileKey` says
// which, and `findDeviceProfile` rejects a stale one with the command that makes a new one.
import { cpus } from 'node:os'
import { ArgumentError, DeviceProfileError } from '../errors.js'
import type { BlobEntry } from '../package/index.js'
import type { ElasticProfile } from '../plan/elastic/index.js'
import type { EncoderConfig } from '../model/encoder-config.js'

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

export interface ElasticDeviceProfile {
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

/** The key of a profile measured here now (`isa`: the addon's kernel ISA, nativeInfo().isa). */
export function profileKey(isa: string, threads: number, direct: boolean, bandwidth: number | undefined, shardDigest: string): ProfileKey {
  return { cpu: cpus()[0]?.model ?? 'unknown', isa, threads, direct, bandwidth: bandwidth ?? 0, shards: shardDigest }
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** The profile of `key` among the package's, or a DeviceProfileError saying why there is none. */
export function findDeviceProfile(stored: unknown, key: ProfileKey, packagePath: string): ElasticDeviceProfile {
  const list = Array.isArray(stored) ? (stored as ElasticDeviceProfile[]) : []
  const how = `run \`flexpipe profile ${packagePath} --threads ${key.threads}${key.direct ? '' : ' --buffered'}${key.bandwidth ? ` --bandwidth ${key.bandwidth}` : ''}\``
  if (list.length === 0) throw new DeviceProfileError(`package ${packagePath} has no device profile; ${how} on this machine first`)
  const same = (p: ElasticDeviceProfile): boolean =>
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
  device: ElasticDeviceProfile,
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
export function computeFor(p: ElasticDeviceProfile, seq: number): ComputeProfile | undefined {
  return [...p.compute].sort((a, b) => a.seq - b.seq).find((c) => c.seq >= seq)
}
