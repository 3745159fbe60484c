// SPDX-License-Identifier: Apache-2.0
// Measures a model package's device profile (lib/profile/budget-device.ts) on this machine: each layer's
// time under every kernel the planner may choose, and the cold read bandwidth of the package's disk.
import { ArgumentError } from '../errors.js'
import { allocArray } from '../model/dtype.js'
import type { Tensor, TensorInfo } from '../model/tensor.js'
import { binding } from '../native/binding.js'
import { PackageReader } from '../package/index.js'
import { rewritePackageMeta } from '../package/rewrite-meta.js'
import type { BudgetDeviceProfile } from '../profile/budget-device.js'
import { BudgetedEngine } from '../runtime/budgeted-engine.js'

/** Deterministic inputs: small non-negative integers for integer inputs (token ids), waves for floats. */
export function profileFeeds(inputs: readonly TensorInfo[], symbolic: ReadonlyMap<string, readonly [number, number]> = new Map()): Record<string, Tensor> {
  const feeds: Record<string, Tensor> = {}
  for (const i of inputs) {
    // a dim prepared for a range at its max (where the engine plans), any other symbolic dim at 1
    const dims = (i.dims ?? []).map((d) => (typeof d === 'number' ? d : (symbolic.get(d)?.[1] ?? 1)))
    const n = dims.reduce((a, b) => a * b, 1)
    const data = allocArray(i.dtype, n)
    for (let k = 0; k < n; k++) {
      if (data instanceof BigInt64Array || data instanceof BigUint64Array) data[k] = BigInt(k % 97)
      else if (i.dtype.startsWith('float')) data[k] = Math.sin(k * 0.37)
      else data[k] = k % 97
    }
    feeds[i.name] = { dtype: i.dtype, dims, data }
  }
  return feeds
}

const median = (xs: number[]): number => {
  const s = xs.slice().sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

type Lean = 'winograd' | 'other' | undefined

/** Per node: the kernel one profiled inference ran it with and its summed op milliseconds. */
async function layerTimesOnce(path: string, threads: number, lean: Lean): Promise<Map<string, { kernel: string; ms: number }>> {
  const engine = await BudgetedEngine.open(path, { threads, verify: 'header' }, { leanKernels: lean })
  try {
    const feeds = profileFeeds(engine.inputs, engine.dimRanges)
    await engine.infer(feeds)
    const { ops } = await engine.inferProfiled(feeds)
    const sums = new Map<string, { kernel: string; ms: number }>()
    for (const o of ops) {
      const s = sums.get(o.node) ?? { kernel: o.kernel ?? 'as-is', ms: 0 }
      s.ms += o.ms
      sums.set(o.node, s)
    }
    return sums
  } finally {
    await engine.close()
  }
}

/**
 * Median milliseconds per node and kernel over `rounds` rounds; each round runs one profiled inference
 * of every pass (the default kernels, then the lean ones), in an order that rotates per round. The
 * passes alternate because a shared machine drifts between fast and slow phases lasting seconds: one
 * pass measured in a slow phase would make its kernels look slower than another pass's, and the
 * planner would pick the wrong ones for the whole model.
 */
async function layerTimes(path: string, threads: number, rounds: number): Promise<Record<string, Record<string, number>>> {
  const passes: Lean[] = [undefined, 'winograd', 'other']
  const samples = new Map<string, Map<string, number[]>>()
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < passes.length; i++) {
      for (const [node, s] of await layerTimesOnce(path, threads, passes[(i + r) % passes.length])) {
        if (!samples.has(node)) samples.set(node, new Map())
        const byKernel = samples.get(node)!
        if (!byKernel.has(s.kernel)) byKernel.set(s.kernel, [])
        byKernel.get(s.kernel)!.push(s.ms)
      }
    }
  }
  const layers: Record<string, Record<string, number>> = {}
  for (const [node, byKernel] of samples) layers[node] = Object.fromEntries([...byKernel].map(([k, ms]) => [k, Number(median(ms).toFixed(4))]))
  return layers
}

/** Arena bytes the read-bandwidth measurement reads into (its ranges wrap around inside it). */
const measureWindowBytes = 32 << 20

/**
 * Cold read bandwidth as the engine sees it: the package's blobs (up to 128 MiB, in file order) read
 * with O_DIRECT as one queue of ranges, several requests in flight, as the pipelined load lane reads
 * them (their arena destinations wrap around inside a 32 MiB window: only the speed matters here).
 */
export async function measureReadBandwidth(path: string): Promise<{ bytesPerSecond: number; direct: boolean }> {
  const reader = await PackageReader.open(path)
  const blobs = reader.manifest.blobs.filter((b) => b.paddedLength > 0).sort((a, b) => a.offset - b.offset)
  await reader.close()
  const cap = 128 << 20
  const ranges: number[] = []
  let total = 0
  let at = 0
  let window = 0
  for (const b of blobs) {
    if (total + b.paddedLength > cap && total > 0) break
    for (let done = 0; done < b.paddedLength; ) {
      // a blob larger than the window is read in window-sized pieces
      if (at >= measureWindowBytes) at = 0
      const piece = Math.min(b.paddedLength - done, measureWindowBytes - at)
      ranges.push(b.offset + done, piece, at)
      window = Math.max(window, at + piece)
      at += piece
      done += piece
    }
    total += b.paddedLength
  }
  if (total === 0) return { bytesPerSecond: 1e9, direct: false }
  const session = new (binding().Session)(1, 'auto')
  try {
    session.resize(window, 0)
    const result = await session.readFile(path, new Float64Array(ranges), { direct: true })
    return { bytesPerSecond: total / (Math.max(result.ms, 1e-3) / 1e3), direct: result.direct }
  } finally {
    session.dispose()
  }
}

/**
 * Measures the profile of a written package (every weight resident: this runs offline, in prepare). The
 * read bandwidth is the median of `runs` probes: the planner's choices follow it (how much to pin,
 * whether narrower weight windows pay). Two preparations of the same VGG-19 package on the development
 * VM recorded one probe each, 0.83 and 1.42 GB/s, and planned 566 and 311 MB of reads per inference at
 * 320 MB. The median resists one slow probe, not a slow minute of the disk.
 */
export async function profilePackage(path: string, threads: number, runs = 3): Promise<BudgetDeviceProfile> {
  const layers = await layerTimes(path, threads, runs)
  const probes: Array<{ bytesPerSecond: number; direct: boolean }> = []
  for (let i = 0; i < Math.max(1, runs); i++) probes.push(await measureReadBandwidth(path))
  const bw = median(probes.map((p) => p.bytesPerSecond))
  return { threads, readBandwidth: Math.round(bw), direct: probes.every((p) => p.direct), layers }
}

/**
 * Re-measures a model package's device profile on this machine and rewrites it in place: after moving
 * the package to another device, or when the disk or CPU speed changed since prepare (the budget planner
 * trades compute for reads with it, so a stale bandwidth picks the wrong kernels for streamed layers).
 */
export async function reprofilePackage(path: string, threads: number, runs = 3): Promise<BudgetDeviceProfile> {
  const reader = await PackageReader.open(path)
  const meta = reader.manifest.meta
  await reader.close()
  if (meta.kind !== 'flexpipe-model') {
    throw new ArgumentError(`package ${path} is not a model package (meta.kind ${JSON.stringify(meta.kind)}); only packages written by flexpipe prepare <model.onnx> carry a kernel profile`)
  }
  const profile = await profilePackage(path, threads, runs)
  await rewritePackageMeta(path, { ...meta, profile })
  return profile
}
