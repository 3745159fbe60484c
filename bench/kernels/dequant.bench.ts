// SPDX-License-Identifier: Apache-2.0
// Shard dequantization and layer quantization (elastic transformers): DequantizeShard output GB/s at
// bits 2..8 and 32 (raw copy) for one shard (98304 weights, 384 KiB of output) and one layer (8 shards in
// one call, 3 MiB), at 1 and 2 threads, through binding.runOp (the op's checks, outlier patch and thread
// split included); the kernel alone per ISA through _testing.dequant; and quantizeLayer on the fixture's
// sizes (6 layers x 786432 weights x bits 2..6).
//
//   node dist/bench/kernels/dequant.bench.js [--runs 40] [--save]
//
// The op runs the kernel table of this process (FLEXPIPE_ISA=ref caps it). Per case: 5 warm-up calls,
// then the median (p50) of --runs timed calls. GB/s = float32 output bytes / p50. Prints one JSON line per
// case; --save writes bench/results/kernels-dequant.json. Timing never fails the run.
import { writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { binding } from '../../lib/native/binding.js'
import { gaussianLayer } from '../../test/helpers/quant.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const runsArg = process.argv.indexOf('--runs')
const runs = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : 40
const b = binding()
const cpu = cpus()[0]?.model ?? 'unknown'
const rows: Array<Record<string, unknown>> = []

function p50(fn: () => void, n = runs): number {
  for (let i = 0; i < 5; i++) fn()
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    fn()
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!
}

function report(row: Record<string, unknown>): void {
  rows.push({ ...row, cpu })
  console.log(JSON.stringify({ ...row, cpu }))
}

const shard = 98304
const layer = gaussianLayer({ n: 8 * shard, seed: 1, std: 0.04, outliers: 50, ties: 0.5 })
interface Blob {
  bits: number
  data: Uint8Array
  weights: number
}
const blobsFor = (bits: number): Blob[] => {
  if (bits === 32) return [{ bits, data: new Uint8Array(layer.buffer, 0, 4 * shard), weights: shard }]
  return b.quantizeLayer(layer, 8, bits).blobs.map((data) => ({ bits, data, weights: shard }))
}

// The op: one shard per call, and a whole layer as one blob (one shard of 786432 weights).
for (const bits of [2, 3, 4, 5, 6, 7, 8, 32]) {
  const one = blobsFor(bits)[0]!
  const whole = bits === 32 ? { bits, data: new Uint8Array(layer.buffer), weights: 8 * shard } : { bits, data: b.quantizeLayer(layer, 1, bits).blobs[0]!, weights: 8 * shard }
  for (const blob of [one, whole]) {
    const out = new Float32Array(blob.weights)
    const ins = [{ dtype: 2, dims: [blob.data.length], data: blob.data }]
    const outs = [{ dtype: 1, dims: [blob.weights], data: out }]
    for (const threads of [1, 2]) {
      const ms = p50(() => b.runOp('DequantizeShard', ins, outs, [bits], [], threads))
      report({ kernel: 'DequantizeShard', isa: b.info().isa, shape: `n=${blob.weights} bits=${bits}`, threads, p50_ms: +ms.toFixed(4), gbps: +((4 * blob.weights) / ms / 1e6).toFixed(2) })
    }
  }
}

// The kernel alone, per ISA, on one shard (no outlier patch, no threads).
interface DequantTesting {
  isas(): string[]
  dequant(isa: string, packed: Uint8Array, bits: number, centroids: Float32Array, begin: number, end: number, out: Float32Array): void
}
const testing = b._testing as unknown as DequantTesting
for (const isa of testing.isas()) {
  for (let bits = 2; bits <= 8; bits++) {
    const packed = new Uint8Array(Math.ceil((shard * bits) / 8)).map((_, i) => (i * 151) & 255)
    const centroids = Float32Array.from({ length: 1 << bits }, (_, i) => i / 7)
    const out = new Float32Array(shard)
    const ms = p50(() => testing.dequant(isa, packed, bits, centroids, 0, shard, out))
    report({ kernel: 'dequant_f32', isa, shape: `n=${shard} bits=${bits}`, threads: 1, p50_ms: +ms.toFixed(4), gbps: +((4 * shard) / ms / 1e6).toFixed(2) })
  }
}

// quantizeLayer on the fixture's sizes: 6 layers x bits 2..6, all threads (OMP_NUM_THREADS caps them).
const layers = Array.from({ length: 6 }, (_, l) => gaussianLayer({ n: 8 * shard, seed: 10 + l, std: 0.04, outliers: 50, ties: 0.5 }))
const perCall: number[] = []
const t0 = performance.now()
for (const w of layers) {
  for (let bits = 2; bits <= 6; bits++) {
    const c0 = performance.now()
    b.quantizeLayer(w, 8, bits)
    perCall.push(performance.now() - c0)
  }
}
const total = performance.now() - t0
perCall.sort((a, c) => a - c)
report({ kernel: 'quantizeLayer', isa: b.info().isa, shape: '6 layers x 786432 weights x bits 2..6', threads: b.info().maxThreads, total_ms: +total.toFixed(1), p50_ms: +perCall[Math.floor(perCall.length / 2)]!.toFixed(2) })

if (process.argv.includes('--save')) {
  const machine = { cpu, cores: cpus().length, loadavg: loadavg(), node: process.version, date: new Date().toISOString() }
  writeFileSync(join(repoRoot, 'bench', 'results', 'kernels-dequant.json'), JSON.stringify({ machine, rows }, null, 2) + '\n')
}
