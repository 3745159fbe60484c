// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the quantization tests: seeded Gaussian layers with injected outliers and ties, the
// spec's quantization model computed independently in TypeScript, and a DequantizeShard call through runOp.
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding, type QuantizedLayer } from '../../lib/native/binding.js'

export interface LayerOptions {
  n: number
  seed: number
  mean?: number
  std?: number
  /** Weights moved to mean ± (5..10) std. */
  outliers?: number
  /** Fraction of weights rounded to a grid of std/64 (many equal values, as fp16 weights have). */
  ties?: number
}

/** A seeded Gaussian layer (Box-Muller), optionally with far outliers and coarse-grid ties. */
export function gaussianLayer(o: LayerOptions): Float32Array {
  const rand = seededRandom(o.seed)
  const mean = o.mean ?? 0
  const std = o.std ?? 0.05
  const w = new Float32Array(o.n)
  for (let i = 0; i < o.n; i++) {
    const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand())
    w[i] = mean + std * z
    if (rand() < (o.ties ?? 0)) w[i] = Math.round(w[i]! / (std / 64)) * (std / 64)
  }
  for (let j = 0; j < (o.outliers ?? 0); j++) {
    const i = Math.floor(rand() * o.n)
    w[i] = mean + (rand() < 0.5 ? -1 : 1) * std * (5 + 5 * rand())
  }
  return w
}

/** log-likelihood < threshold, evaluated as native/runtime/quant/outlier_quantize.h states (same operations, same order). */
export function outlierTest(mean: number, std: number, threshold: number): (w: number) => boolean {
  const ll0 = -0.5 * Math.log(2 * Math.PI * std * std)
  const denom = 2 * std * std
  return (w) => {
    const d = w - mean
    return ll0 - (d * d) / denom < threshold
  }
}

export interface Model {
  outlier: Uint8Array
  /** Cluster of every non-outlier (0 for outliers). */
  code: Uint8Array
  centroids: Float32Array
  sizes: number[]
  /** Weights whose log-likelihood is within 1e-9 of the threshold (where rounding could decide). */
  borderline: number
}

/**
 * The spec's model from a layer and the fit: outliers by log-likelihood; the non-outliers ranked by
 * (value, position) (-0 equals +0), rank r in cluster floor(r * 2^bits / m); a centroid is the float64
 * mean of its members summed in rank order, rounded to float32 (0 for an empty cluster).
 */
export function quantModel(w: Float32Array, mean: number, std: number, bits: number, threshold = -4): Model {
  const isOut = outlierTest(mean, std, threshold)
  const ll0 = -0.5 * Math.log(2 * Math.PI * std * std)
  const outlier = new Uint8Array(w.length)
  const kept: number[] = []
  let borderline = 0
  for (let i = 0; i < w.length; i++) {
    const d = w[i]! - mean
    if (Math.abs(ll0 - (d * d) / (2 * std * std) - threshold) < 1e-9) borderline++
    if (isOut(w[i]!)) outlier[i] = 1
    else kept.push(i)
  }
  kept.sort((a, b) => w[a]! - w[b]! || a - b)
  const k = 2 ** bits
  const m = kept.length
  const code = new Uint8Array(w.length)
  const sums = new Float64Array(k)
  const sizes = new Array<number>(k).fill(0)
  kept.forEach((i, r) => {
    const c = Math.floor((r * k) / m)
    code[i] = c
    sums[c]! += w[i]!
    sizes[c]!++
  })
  const centroids = new Float32Array(k)
  for (let c = 0; c < k; c++) centroids[c] = sizes[c]! > 0 ? sums[c]! / sizes[c]! : 0
  return { outlier, code, centroids, sizes, borderline }
}

/** Runs DequantizeShard on a blob into outputs of the given element counts; returns them concatenated. */
export function dequantizeNative(blob: Uint8Array, bits: number, parts: readonly number[], threads = 1): Float32Array {
  const total = parts.reduce((a, b) => a + b, 0)
  const out = new Float32Array(total)
  let at = 0
  const outputs = parts.map((p) => {
    const view = out.subarray(at, at + p)
    at += p
    return { dtype: 1, dims: [p], data: view }
  })
  binding().runOp('DequantizeShard', [{ dtype: 2, dims: [blob.length], data: blob }], outputs, [bits], [], threads)
  return out
}

/** Whether two float arrays hold the same bits. */
export function sameBits(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
}

export type { QuantizedLayer }
