// SPDX-License-Identifier: Apache-2.0
// Measures an elastic package's device profile (lib/profile/elastic-device.ts) on this machine: the
// compute delay of each layer width and the IO delay of each layer's job, as the engine runs them.
import { simulatePipeline } from '../plan/elastic/index.js'
import { fitLine } from '../profile/fit-line.js'
import { computeFor, median, plannerProfile, type ComputeProfile, type ElasticDeviceProfile, type ProfileKey } from '../profile/elastic-device.js'
import type { ElasticRunner, RunPlan } from '../runtime/elastic-runner.js'

export interface MeasureOptions {
  readonly seqs: readonly number[]
  readonly repeats: number
  readonly direct: boolean
  readonly bandwidth?: number
  readonly onProgress?: (done: number, total: number, what: string) => void
}

/** Measures compute and IO on an open executor (it re-applies plans; the caller re-applies its own after). */
export async function measureElasticDeviceProfile(
  x: ElasticRunner,
  key: ProfileKey,
  o: MeasureOptions,
): Promise<ElasticDeviceProfile> {
  const c = x.config
  const M = c.heads
  const L = c.layers
  const total = o.seqs.length * M + x.bitwidths.length + 2
  let done = 0
  const ids = (seq: number): number[] => Array.from({ length: seq }, (_, i) => (i * 7919) % c.vocab)
  const compute: ComputeProfile[] = []
  for (const seq of o.seqs) {
    // Every layer of the model at width m, shards resident: each layer's compute as it runs in a
    // whole inference (dequantization of 6-bit shards included), and the rest is the fixed part. The
    // widths take turns, one inference each per round, so that a slow spell of the machine (this VM's
    // speed moves by 1.5x for seconds at a time) lands on every width a little rather than on one width
    // wholly: measured width by width, the full model's compute came out 9.3 ms in one profile and
    // 18.4 ms in the next.
    const plans: RunPlan[] = []
    for (let m = 1; m <= M; m++) plans.push({ depth: L, width: m, seq, bits: Array.from({ length: L }, () => new Array(m).fill(6)), preloaded: Array.from({ length: L }, () => new Array(m).fill(true)) })
    for (const plan of plans) {
      await x.apply(plan)
      await x.run(ids(seq)) // warm-up
    }
    const layer: number[][] = plans.map(() => [])
    const fixed: number[] = []
    for (let r = 0; r < o.repeats; r++) {
      for (let i = 0; i < M; i++) {
        await x.apply(plans[i]!)
        const { times } = await x.run(ids(seq))
        let sum = 0
        for (let l = 0; l < L; l++) {
          const ms = times.computeEndMs[l]! - times.computeStartMs[l]!
          layer[i]!.push(ms)
          sum += ms
        }
        fixed.push(times.totalMs - sum)
      }
    }
    const layerMs = [0, ...layer.map((ms) => median(ms))]
    o.onProgress?.((done += M), total, `compute seq ${seq}, 1..${M} shards`)
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
  const uncalibrated: ElasticDeviceProfile = { key, created: new Date().toISOString(), compute, readMsPerByte: line.msPerByte, readMsPerJob: line.msPerJob, readSamples: samples, shardReadMs: shardMs, readP95: { ...lineP95, samples: samplesP95 }, calibration: { scale: 1, jitter: 1, runs: [] } }
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
