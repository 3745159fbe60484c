// SPDX-License-Identifier: Apache-2.0
// prepare --elastic: a Hugging Face BERT classifier folder -> an elastic package (.fpk).
//
// The package (lib/package/format.ts) holds:
//   graph  { kind: 'elastic-encoder', config, tokenizer }   (config.json and tokenizer.json, as parsed)
//   meta   { kind: 'flexpipe-elastic', bitwidths, shardRows, quant: per-layer Gaussian and outlier
//            counts }, later also `importance` (prepare with a dev set) and `deviceProfile`
//            (flexpipe profile), added with rewritePackageMeta
//   blobs  resident float32 tensors (kind 'resident': embeddings, LayerNorms, biases, pooler,
//          classifier), then per layer (group 'layer <l>') every shard at every bitwidth:
//          'L<l>.S<h>.b<bits>', kind 'shard' — FPQ1 blobs (lib/package/quant-blob.ts) for 2..8 bits,
//          raw float32 rows for 32. Each is its own 4 KiB-aligned blob, so one IO job per layer reads
//          exactly the versions a plan chose.
// Quantization (Gaussian outlier-aware, seed §4.2 and §6) runs natively (binding.quantizeLayer),
// one Gaussian and one set of 2^k centroids per layer and bitwidth.
import { readFile, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { ArgumentError, ModelFormatError } from '../errors.js'
import { binding } from '../native/binding.js'
import { shardBlobName } from '../package/elastic-manifest.js'
import { PackageWriter } from '../package/index.js'
import { readEncoderConfig, shardRows, type EncoderConfig } from '../model/encoder-config.js'
import { extractEncoderWeights, type EncoderWeights } from './encoder-weights.js'
import { readOnnxEncoder } from '../model/onnx-encoder.js'
import { readSafetensors } from '../model/safetensors.js'

export const defaultBitwidths: readonly number[] = [2, 3, 4, 5, 6, 32]

export interface ElasticPrepareOptions {
  /** Shard versions to store (default 2, 3, 4, 5, 6 and 32 = float32). */
  readonly bitwidths?: readonly number[]
  /** Log-likelihood below which a weight is an outlier (default -4). */
  readonly outlierThreshold?: number
  readonly onProgress?: (done: number, total: number, what: string) => void
  /** Fixed `created` time for reproducible packages. */
  readonly created?: Date
}

export interface LayerQuantStats {
  readonly mean: number
  readonly std: number
  /** Outliers per bitwidth (the same for every bitwidth: the Gaussian does not depend on it). */
  readonly outliers: number
  readonly weights: number
}

export interface ElasticPrepareReport {
  readonly layers: number
  readonly shardsPerLayer: number
  readonly bitwidths: readonly number[]
  readonly quant: readonly LayerQuantStats[]
  /** Fraction of shard weights kept exactly as outliers. */
  readonly outlierFraction: number
  /** Bytes of one shard at each bitwidth (largest over shards). */
  readonly shardBytes: Readonly<Record<string, number>>
  readonly residentBytes: number
  readonly packageBytes: number
  readonly ms: number
}

/** The resident tensors of the package, by blob name. */
export function residentTensors(c: EncoderConfig, w: EncoderWeights): Array<[string, Float32Array, number[]]> {
  const H = c.hidden
  const out: Array<[string, Float32Array, number[]]> = [
    ['emb.word', w.wordEmbeddings, [c.vocab, H]],
    ['emb.pos', w.positionEmbeddings, [c.maxPositions, H]],
    ['emb.type', w.tokenTypeEmbeddings, [c.typeVocab, H]],
    ['emb.ln.g', w.embLnGamma, [H]],
    ['emb.ln.b', w.embLnBeta, [H]],
  ]
  w.layers.forEach((l, i) => {
    const add = (n: string, t: Float32Array): void => void out.push([`L${i}.${n}`, t, [t.length]])
    add('bq', l.bq)
    add('bk', l.bk)
    add('bv', l.bv)
    add('bo', l.bo)
    add('ln1g', l.ln1Gamma)
    add('ln1b', l.ln1Beta)
    add('b1', l.b1)
    add('b2', l.b2)
    add('ln2g', l.ln2Gamma)
    add('ln2b', l.ln2Beta)
  })
  out.push(['pooler.w', w.poolerWeight, [H, H]], ['pooler.b', w.poolerBias, [H]])
  out.push(['classifier.w', w.classifierWeight, [c.labels.length, H]], ['classifier.b', w.classifierBias, [c.labels.length]])
  return out
}


function checkBitwidths(bits: readonly number[]): number[] {
  const out = [...new Set(bits)].sort((a, b) => a - b)
  if (out.length === 0 || out.some((b) => !(Number.isInteger(b) && ((b >= 2 && b <= 8) || b === 32)))) {
    throw new ArgumentError(`bitwidths: expected integers in 2..8 or 32, got ${JSON.stringify(bits)}`)
  }
  return out
}

/**
 * Shard importance shipped with the model (`importance.json`, written by `flexpipe profile --dev ...
 * --save-importance`): profiling it is the seed's one-time, per-model preprocessing, so a model folder
 * may carry it. Checked: the ranking is a permutation of every (layer, shard).
 */
async function readImportance(path: string, c: EncoderConfig): Promise<Record<string, unknown> | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return undefined
  }
  let raw: { ranking?: unknown }
  try {
    raw = JSON.parse(text) as { ranking?: unknown }
  } catch (err) {
    throw new ModelFormatError(`${path}: not JSON (${(err as Error).message}); delete it or re-run flexpipe profile --dev`)
  }
  const r = raw.ranking
  const seen = new Set<string>()
  const ok =
    Array.isArray(r) &&
    r.length === c.layers * c.heads &&
    r.every((e) => Array.isArray(e) && e.length === 2 && Number.isInteger(e[0]) && Number.isInteger(e[1]) && e[0] >= 0 && e[0] < c.layers && e[1] >= 0 && e[1] < c.heads && !seen.has(`${e[0]},${e[1]}`) && seen.add(`${e[0]},${e[1]}`))
  if (!ok) throw new ModelFormatError(`${path}: ranking must list every [layer, shard] of the ${c.layers}x${c.heads} model once; re-run flexpipe profile --dev`)
  return { ...(raw as Record<string, unknown>), source: 'importance.json' }
}

/** The encoder's config and weights: from the Hugging Face folder, or from an ONNX export (onnx-encoder.ts). */
async function readEncoder(model: string): Promise<{ config: EncoderConfig; rawConfig: unknown; weights: EncoderWeights }> {
  if (model.endsWith('.onnx')) {
    const m = await readOnnxEncoder(model)
    return { config: m.config, rawConfig: m.rawConfig, weights: extractEncoderWeights(m.config, m.tensors, model) }
  }
  const config = await readEncoderConfig(join(model, 'config.json'))
  const rawConfig = JSON.parse(await readFile(join(model, 'config.json'), 'utf8')) as unknown
  return { config, rawConfig, weights: extractEncoderWeights(config, await readSafetensors(join(model, 'model.safetensors')), join(model, 'model.safetensors')) }
}

/**
 * Reads the model (a Hugging Face folder with config.json and model.safetensors, or its ONNX export
 * `<folder>/model.onnx`) and the folder's tokenizer.json (and importance.json, if any), and writes the
 * elastic package.
 */
export async function prepareElastic(model: string, outPath: string, options: ElasticPrepareOptions = {}): Promise<ElasticPrepareReport> {
  const t0 = performance.now()
  const bitwidths = checkBitwidths(options.bitwidths ?? defaultBitwidths)
  const threshold = options.outlierThreshold ?? -4
  const { config, rawConfig, weights } = await readEncoder(model)
  const modelDir = model.endsWith('.onnx') ? dirname(model) : model
  let tokenizer: unknown
  try {
    tokenizer = JSON.parse(await readFile(join(modelDir, 'tokenizer.json'), 'utf8'))
  } catch (err) {
    throw new ModelFormatError(`${join(modelDir, 'tokenizer.json')}: cannot read the tokenizer (${(err as Error).message}); export it with the model (tokenizer.save_pretrained)`)
  }
  const writer = await PackageWriter.create(outPath, { producer: 'flexpipe prepare --elastic', created: options.created })
  let residentBytes = 0
  try {
    for (const [name, data, dims] of residentTensors(config, weights)) {
      residentBytes += data.byteLength
      await writer.addBlob(name, data, { dtype: 'float32', dims, kind: 'resident' })
    }
    const quant: LayerQuantStats[] = []
    const shardBytes: Record<string, number> = {}
    const rows = shardRows(config)
    const total = config.layers * bitwidths.length
    let done = 0
    for (let l = 0; l < config.layers; l++) {
      const flat = weights.shards[l]!
      const perShard = flat.length / config.heads
      let stats: LayerQuantStats | undefined
      for (const bits of bitwidths) {
        let blobs: Uint8Array[]
        if (bits === 32) {
          blobs = Array.from({ length: config.heads }, (_, h) => new Uint8Array(flat.buffer, flat.byteOffset + h * perShard * 4, perShard * 4))
        } else {
          const q = binding().quantizeLayer(flat, config.heads, bits, threshold)
          blobs = q.blobs
          stats ??= { mean: q.mean, std: q.std, outliers: q.outliers, weights: flat.length }
        }
        for (let h = 0; h < config.heads; h++) {
          const b = blobs[h]!
          shardBytes[bits] = Math.max(shardBytes[bits] ?? 0, b.byteLength)
          await writer.addBlob(shardBlobName(l, h, bits), b, { kind: 'shard', group: `layer ${l}`, ...(bits === 32 ? { dtype: 'float32' as const, dims: [rows, config.hidden] } : {}) })
        }
        options.onProgress?.(++done, total, `layer ${l} @${bits === 32 ? 'fp32' : `${bits}bit`}`)
      }
      quant.push(stats ?? { mean: 0, std: 0, outliers: 0, weights: flat.length })
    }
    const importance = await readImportance(join(modelDir, 'importance.json'), config)
    const outliers = quant.reduce((a, q) => a + q.outliers, 0)
    const weightsTotal = quant.reduce((a, q) => a + q.weights, 0)
    const meta = {
      kind: 'flexpipe-elastic',
      bitwidths,
      shardRows: rows,
      outlierThreshold: threshold,
      quant,
      outlierFraction: outliers / weightsTotal,
      ...(importance === undefined ? {} : { importance }),
    }
    await writer.finish({ kind: 'elastic-encoder', config: rawConfig, tokenizer }, meta)
    const bytes = (await stat(outPath)).size
    return {
      layers: config.layers,
      shardsPerLayer: config.heads,
      bitwidths,
      quant,
      outlierFraction: outliers / weightsTotal,
      shardBytes,
      residentBytes,
      packageBytes: bytes,
      ms: performance.now() - t0,
    }
  } catch (err) {
    await writer.abort().catch(() => undefined)
    throw err
  }
}
