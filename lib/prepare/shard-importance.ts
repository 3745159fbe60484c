// SPDX-License-Identifier: Apache-2.0
// A labelled dev set (JSON lines {"text", "label"}) and the accuracy of a sub-model on it.
import { readFile } from 'node:fs/promises'
import { ArgumentError } from '../errors.js'
import type { ElasticRunner, RunPlan } from '../runtime/elastic-runner.js'
import type { TextEncoder } from '../model/tokenize.js'

export interface DevExample {
  readonly ids: readonly number[]
  readonly label: number
}

export async function readDevSet(path: string, encoder: TextEncoder, labels: number, limit = Infinity): Promise<DevExample[]> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter((l) => l.trim() !== '')
  const out: DevExample[] = []
  for (const [i, line] of lines.entries()) {
    if (out.length >= limit) break
    let row: { text?: unknown; label?: unknown }
    try {
      row = JSON.parse(line) as typeof row
    } catch {
      throw new ArgumentError(`${path}:${i + 1}: not JSON`)
    }
    if (typeof row.text !== 'string' || !Number.isInteger(row.label) || (row.label as number) < 0 || (row.label as number) >= labels) {
      throw new ArgumentError(`${path}:${i + 1}: expected {"text": string, "label": 0..${labels - 1}}`)
    }
    out.push({ ids: encoder.encode(row.text).ids, label: row.label as number })
  }
  return out
}

/** Fraction of examples whose arg-max logit is the label, running `plan` (already applied or applied here). */
export async function accuracy(x: ElasticRunner, plan: RunPlan | undefined, dev: readonly DevExample[]): Promise<number> {
  if (plan !== undefined) await x.apply(plan)
  let right = 0
  for (const e of dev) {
    const { logits } = await x.run(e.ids)
    let best = 0
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i
    if (best === e.label) right++
  }
  return dev.length === 0 ? NaN : right / dev.length
}

/** A plan with every shard of the sub-model resident (no IO): for accuracy only. */
export function residentPlan(depth: number, width: number, seq: number, bits: ReadonlyArray<readonly number[]>): RunPlan {
  return { depth, width, seq, bits, preloaded: bits.map((row) => row.map(() => true)) }
}

/**
 * Shard importance by the seed's procedure (§5.2): every shard of the full model at the lowest
 * bitwidth, one shard at a time raised to the highest, dev accuracy recorded; ranked by accuracy,
 * ties broken bottom layer first. Returns the ranking and the accuracy table [layer][shard].
 */
export async function profileImportance(
  x: ElasticRunner,
  dev: readonly DevExample[],
  seq: number,
  onProgress?: (done: number, total: number, what: string) => void,
): Promise<{ ranking: Array<[number, number]>; accuracy: number[][]; lowAccuracy: number; lowBits: number; highBits: number }> {
  const { layers: L, heads: M } = x.config
  const bw = x.bitwidths
  const low = bw[0]!
  const high = bw[bw.length - 1]!
  const base = (): number[][] => Array.from({ length: L }, () => new Array<number>(M).fill(low))
  const lowAccuracy = await accuracy(x, residentPlan(L, M, seq, base()), dev)
  const table: number[][] = []
  let done = 0
  for (let l = 0; l < L; l++) {
    const row: number[] = []
    for (let h = 0; h < M; h++) {
      const bits = base()
      bits[l]![h] = high
      row.push(await accuracy(x, residentPlan(L, M, seq, bits), dev))
      onProgress?.(++done, L * M, `importance of layer ${l} shard ${h}`)
    }
    table.push(row)
  }
  const ranking: Array<[number, number]> = []
  for (let l = 0; l < L; l++) for (let h = 0; h < M; h++) ranking.push([l, h])
  ranking.sort((a, b) => table[b[0]]![b[1]]! - table[a[0]]![a[1]]! || a[0] - b[0] || a[1] - b[1])
  return { ranking, accuracy: table, lowAccuracy, lowBits: low, highBits: high }
}

/**
 * Dev accuracy of every sub-model at every stored bitwidth, all of its shards at that bitwidth:
 * table[depth - 1][width - 1][bi] for bitwidths[bi] (beyond the seed: the elastic planner picks the
 * most accurate plan that meets T from it, lib/plan/elastic/accuracy-plan.ts). N x M x bitwidths
 * evaluations, smallest sub-models first; about sum(n * m) / (N * M) full-model passes per bitwidth.
 */
export async function profileSubModels(
  x: ElasticRunner,
  dev: readonly DevExample[],
  seq: number,
  onProgress?: (done: number, total: number, what: string) => void,
): Promise<number[][][]> {
  const { layers: L, heads: M } = x.config
  const bw = x.bitwidths
  const table: number[][][] = Array.from({ length: L }, () => Array.from({ length: M }, () => new Array<number>(bw.length).fill(NaN)))
  let done = 0
  for (let d = 1; d <= L; d++) {
    for (let w = 1; w <= M; w++) {
      for (const [bi, bits] of bw.entries()) {
        const plan = residentPlan(d, w, seq, Array.from({ length: d }, () => new Array<number>(w).fill(bits)))
        table[d - 1]![w - 1]![bi] = await accuracy(x, plan, dev)
        onProgress?.(++done, L * M * bw.length, `accuracy of ${d} x ${w} at ${bits} bits`)
      }
    }
  }
  return table
}
