// SPDX-License-Identifier: Apache-2.0
// binding.quantizeLayer against the spec's model computed in TypeScript: Gaussian fit, the outlier set
// (exactly the weights below the log-likelihood threshold), equal-population rank clusters, centroids
// as cluster means, and the round trip (TS reference decoder and the native DequantizeShard op both give
// centroid-or-outlier exactly); header round trip; argument errors; the outlier fraction on Gaussian data.
import t from 'tap'
import { binding } from '../../lib/native/binding.js'
import { dequantizeReference, parseQuantBlobHeader, quantBlobBytes } from '../../lib/package/quant-blob.js'
import { dequantizeNative, gaussianLayer, quantModel, sameBits } from '../helpers/quant.js'

const b = binding()

interface Case {
  shards: number
  perShard: number
  bits: number
  seed: number
  threshold?: number
  ties?: number
  mean?: number
}

const cases: Case[] = []
for (let bits = 2; bits <= 8; bits++) {
  cases.push({ shards: 8, perShard: 3 * 1024 + 5, bits, seed: bits, ties: 0.3 })
  cases.push({ shards: 3, perShard: 2000, bits, seed: 100 + bits, threshold: -2, mean: 0.5 })
}

for (const c of cases) {
  const name = `bits=${c.bits} shards=${c.shards}x${c.perShard} seed=${c.seed} threshold=${c.threshold ?? -4}`
  t.test(`quantizeLayer follows the model: ${name}`, async (t) => {
    const n = c.shards * c.perShard
    const w = gaussianLayer({ n, seed: c.seed, outliers: 40, ties: c.ties ?? 0, mean: c.mean ?? 0 })
    const r = b.quantizeLayer(w, c.shards, c.bits, c.threshold)
    let sum = 0
    for (const v of w) sum += v
    const mean = sum / n
    let sq = 0
    for (const v of w) sq += (v - mean) ** 2
    t.ok(Math.abs(r.mean - mean) <= 1e-12 * (Math.abs(mean) + 1), `mean ${r.mean} vs ${mean}`)
    t.ok(Math.abs(r.std - Math.sqrt(sq / n)) <= 1e-12 * r.std, `population std ${r.std}`)

    const model = quantModel(w, r.mean, r.std, c.bits, c.threshold)
    t.equal(model.borderline, 0, 'no weight sits within 1e-9 of the threshold (the set is decided by the formula, not by rounding)')
    t.ok(sameBits(r.centroids, model.centroids), 'centroids are the float64 cluster means, rounded to float32')
    const sizes = model.sizes.filter((s) => s > 0)
    t.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `cluster sizes differ by at most one (${Math.min(...sizes)}..${Math.max(...sizes)})`)
    t.equal(r.blobs.length, c.shards)

    let outliers = 0
    let mismatches = 0
    r.blobs.forEach((blob, s) => {
      const h = parseQuantBlobHeader(blob)
      const base = s * c.perShard
      const want = new Float32Array(c.perShard)
      const wantIndex: number[] = []
      for (let i = 0; i < c.perShard; i++) {
        if (model.outlier[base + i]) wantIndex.push(i)
        want[i] = model.outlier[base + i] ? w[base + i]! : model.centroids[model.code[base + i]!]!
      }
      outliers += h.outliers
      if (
        h.bits !== c.bits ||
        h.count !== c.perShard ||
        blob.length !== quantBlobBytes(h.count, h.bits, h.outliers) ||
        !sameBits(h.centroids, r.centroids) ||
        h.outlierIndex.join() !== wantIndex.join() ||
        !sameBits(h.outlierValue, Float32Array.from(wantIndex, (i) => w[base + i]!))
      ) {
        mismatches++
        t.fail(`shard ${s}: header, outlier list or blob size differ from the model`)
      }
      if (!sameBits(dequantizeReference(blob), want)) {
        mismatches++
        t.fail(`shard ${s}: the TS reference decoder differs from the model`)
      }
      const parts = [Math.floor(c.perShard / 3), 0, c.perShard - Math.floor(c.perShard / 3) - 7, 7]
      for (const threads of [1, 2]) {
        if (!sameBits(dequantizeNative(blob, c.bits, parts, threads), want)) {
          mismatches++
          t.fail(`shard ${s}: DequantizeShard (${threads} threads) differs from the model`)
        }
      }
    })
    t.equal(outliers, r.outliers, 'the blobs hold every outlier')
    t.equal(outliers, model.outlier.reduce((a, x) => a + x, 0), 'outliers are exactly the weights below the threshold')
    t.ok(r.outliers >= 30, `the 40 injected outliers are found (${r.outliers} in all)`)
    t.equal(mismatches, 0, 'every shard matches the model')
  })
}

t.test('a fixture-sized layer (8 x 98304 weights): model, round trip and time', async (t) => {
  const w = gaussianLayer({ n: 8 * 98304, seed: 7, std: 0.04, outliers: 100, ties: 0.5 })
  for (const bits of [2, 4, 6]) {
    const t0 = performance.now()
    const r = b.quantizeLayer(w, 8, bits)
    const ms = performance.now() - t0
    t.comment(`quantizeLayer 786432 weights, ${bits} bits: ${ms.toFixed(1)} ms (${b.info().maxThreads} threads)`)
    const model = quantModel(w, r.mean, r.std, bits)
    t.ok(sameBits(r.centroids, model.centroids), `${bits} bits: centroids`)
    let same = true
    r.blobs.forEach((blob, s) => {
      const want = Float32Array.from({ length: 98304 }, (_, i) =>
        model.outlier[s * 98304 + i] ? w[s * 98304 + i]! : model.centroids[model.code[s * 98304 + i]!]!,
      )
      same &&= sameBits(dequantizeReference(blob), want) && sameBits(dequantizeNative(blob, bits, [32 * 256, 32 * 256, 32 * 256, 32 * 256, 128 * 256, 128 * 256], 2), want)
    })
    t.ok(same, `${bits} bits: every shard decodes to the model (TS and native)`)
  }
})

t.test('outlier fraction on Gaussian data matches the Gaussian tail beyond the threshold', async (t) => {
  for (const std of [0.02, 0.05, 0.2]) {
    const n = 8 * 98304
    const r = b.quantizeLayer(gaussianLayer({ n, seed: 11, std }), 8, 4)
    // ll < -4  <=>  z^2 > 8 - ln(2 pi std^2)
    const z = Math.sqrt(8 - Math.log(2 * Math.PI * r.std * r.std))
    const tail = erfc(z / Math.SQRT2)
    const fraction = r.outliers / n
    t.comment(`std ${std}: ${r.outliers} outliers = ${(100 * fraction).toFixed(4)}% (|z| > ${z.toFixed(3)}, Gaussian tail ${(100 * tail).toFixed(4)}%)`)
    const sd = Math.sqrt(n * tail) // Poisson spread of the count
    t.ok(Math.abs(r.outliers - n * tail) < 5 * sd + 2, `std ${std}: ${r.outliers} outliers, expected ${(n * tail).toFixed(0)} ± ${sd.toFixed(0)}`)
  }
})

/** erfc(x) for x >= 0 (Numerical Recipes erfcc, relative error < 1.2e-7). */
function erfc(x: number): number {
  const t = 1 / (1 + 0.5 * x)
  const p =
    -x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
  return t * Math.exp(p)
}

t.test('edge layers: constant, fewer weights than clusters, signed zeros', async (t) => {
  const constant = new Float32Array(64).fill(0.25)
  const rc = b.quantizeLayer(constant, 2, 3)
  t.equal(rc.std, 0)
  t.equal(rc.outliers, 0, 'std 0: no outliers (every log-likelihood is NaN)')
  t.ok(rc.blobs.every((blob) => dequantizeReference(blob).every((v) => v === 0.25)), 'every weight decodes to the constant')

  const tiny = Float32Array.from([0.1, -0.2, 0.3, 0.05, -0.01, 0.2])
  const rt = b.quantizeLayer(tiny, 1, 6, -1e6)
  const model = quantModel(tiny, rt.mean, rt.std, 6, -1e6)
  t.ok(sameBits(rt.centroids, model.centroids), '6 weights in 64 clusters: members are their own centroids, empty clusters 0')
  t.ok(sameBits(dequantizeReference(rt.blobs[0]!), tiny), 'and decode exactly')
  t.ok(sameBits(dequantizeNative(rt.blobs[0]!, 6, [6]), tiny), 'natively too')

  const zeros = Float32Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? -0 : i % 3 === 1 ? 0 : (i - 20) / 100))
  const rz = b.quantizeLayer(zeros, 4, 2)
  const mz = quantModel(zeros, rz.mean, rz.std, 2)
  t.ok(sameBits(rz.centroids, mz.centroids), '-0 ranks as +0, by position')
  const decoded = new Float32Array(40)
  rz.blobs.forEach((blob, s) => decoded.set(dequantizeNative(blob, 2, [10]), 10 * s))
  t.ok(sameBits(decoded, Float32Array.from(zeros, (v, i) => (mz.outlier[i] ? v : mz.centroids[mz.code[i]!]!))), 'and decode to the model')
})

t.test('skewed layers (bimodal, heavy-tailed, few distinct values, no outliers) follow the model', async (t) => {
  const n = 4 * 5000
  const rand = (seed: number): (() => number) => {
    let s = seed
    return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32)
  }
  const r1 = rand(1)
  const r2 = rand(2)
  const r3 = rand(3)
  const layers: Array<[string, Float32Array, number]> = [
    ['bimodal', Float32Array.from({ length: n }, (_, i) => (i % 2 ? 1 : 0) + 1e-4 * r1()), -4],
    ['heavy-tailed, threshold -1e6', Float32Array.from({ length: n }, () => Math.tan(Math.PI * (r2() - 0.5)) / 100), -1e6],
    ['three distinct values', Float32Array.from({ length: n }, () => [-0.5, 0.25, 2][Math.floor(3 * r3())]!), -4],
    ['one spike and a spread', Float32Array.from({ length: n }, (_, i) => (i % 10 ? 0.125 : (i / n) * 1e-3)), -4],
  ]
  for (const [what, w, threshold] of layers) {
    for (const bits of [2, 5, 8]) {
      const r = b.quantizeLayer(w, 4, bits, threshold)
      const model = quantModel(w, r.mean, r.std, bits, threshold)
      const decoded = new Float32Array(n)
      r.blobs.forEach((blob, s) => decoded.set(dequantizeNative(blob, bits, [5000]), 5000 * s))
      const want = Float32Array.from(w, (v, i) => (model.outlier[i] ? v : model.centroids[model.code[i]!]!))
      t.ok(sameBits(r.centroids, model.centroids) && sameBits(decoded, want) && r.outliers === model.outlier.reduce((a, x) => a + x, 0), `${what}, ${bits} bits`)
    }
  }
})

t.test('threshold moves the outlier set; everything is an outlier at a huge threshold', async (t) => {
  const w = gaussianLayer({ n: 4096, seed: 3 })
  const counts = [-8, -4, -2, 0].map((thr) => b.quantizeLayer(w, 4, 3, thr).outliers)
  t.ok(counts.every((c, i) => i === 0 || c >= counts[i - 1]!), `outliers grow with the threshold: ${counts.join(', ')}`)
  const all = b.quantizeLayer(w, 4, 3, 1e9)
  t.equal(all.outliers, 4096, 'every weight is an outlier')
  t.ok(all.blobs.every((blob, s) => sameBits(dequantizeReference(blob), w.subarray(1024 * s, 1024 * (s + 1)))), 'and decodes exactly')
  t.ok(sameBits(dequantizeNative(all.blobs[1]!, 3, [1024]), w.subarray(1024, 2048)), 'natively too')
})

t.test('quantizeLayer argument errors are TypeError/RangeError with clear messages', async (t) => {
  const w = new Float32Array(64).fill(1)
  const q = b.quantizeLayer as (...args: unknown[]) => unknown
  t.throws(() => q(new Float64Array(64), 4, 4), { name: 'TypeError', message: /layer: expected a Float32Array/ })
  t.throws(() => q([1, 2, 3, 4], 4, 4), TypeError)
  t.throws(() => q(w, '4', 4), { name: 'TypeError', message: /shardCount/ })
  t.throws(() => q(w, 4, null), { name: 'TypeError', message: /bits/ })
  t.throws(() => q(w, 4, 4, 'x'), { name: 'TypeError', message: /threshold/ })
  for (const bits of [0, 1, 9, 32, 2.5, -3]) t.throws(() => q(w, 4, bits), { name: 'RangeError', message: /bits/ }, `bits ${bits}`)
  t.throws(() => q(w, 0, 4), { name: 'RangeError', message: /shardCount/ })
  t.throws(() => q(w, 5, 4), { name: 'RangeError', message: /length=64, shardCount=5/ })
  t.throws(() => q(new Float32Array(0), 1, 4), { name: 'RangeError', message: /positive multiple/ })
  t.throws(() => q(w, 4, 4, Number.NaN), { name: 'RangeError', message: /threshold/ })
  t.throws(() => q(w, 4, 4, -Infinity), { name: 'RangeError', message: /threshold/ })
  const bad = new Float32Array(70000).fill(0.5)
  bad[68000] = Number.NaN
  t.throws(() => q(bad, 1, 4), { name: 'RangeError', message: /weight 68000 is not finite/ })
  bad[68000] = 0
  bad[3] = -Infinity
  t.throws(() => q(bad, 1, 4), { name: 'RangeError', message: /weight 3 is not finite/ })
})

t.test('parseQuantBlobHeader round-trips what quantizeLayer wrote', async (t) => {
  const w = gaussianLayer({ n: 2 * 777, seed: 21, outliers: 6 })
  const r = b.quantizeLayer(w, 2, 5)
  const h = parseQuantBlobHeader(r.blobs[0]!)
  t.match(h, { bits: 5, count: 777 })
  t.equal(h.packedOffset, 32 + 4 * 32 + 8 * h.outliers)
  t.equal(r.blobs[0]!.length, quantBlobBytes(777, 5, h.outliers))
  t.equal(new TextDecoder().decode(r.blobs[0]!.subarray(0, 4)), 'FPQ1')
  const padded = new Uint8Array(r.blobs[0]!.length + 9)
  padded.set(r.blobs[0]!, 1)
  const view = padded.subarray(1, 1 + r.blobs[0]!.length)
  t.same(parseQuantBlobHeader(view), h, 'the same from a view at an odd byte offset')
  t.ok(sameBits(dequantizeNative(view, 5, [777]), dequantizeReference(r.blobs[0]!)), 'the op reads a blob at an odd byte offset')
})
