// SPDX-License-Identifier: Apache-2.0
// The dev set as the benchmark feeds it: token ids cut to the plan's sequence length the way
// ElasticEngine.classify cuts them (the head of the text, the final [SEP] kept), with their labels.
import { readDevSet, type DevExample } from '../../lib/prepare/shard-importance.js'
import type { ElasticPackage } from '../../lib/package/elastic-manifest.js'
import { TextEncoder } from '../../lib/model/tokenize.js'

export function fitIds(ids: readonly number[], seq: number): number[] {
  return ids.length > seq ? [...ids.slice(0, seq - 1), ids[ids.length - 1]!] : [...ids]
}

export function maxLengthOf(pkg: ElasticPackage): number {
  return new TextEncoder(pkg.tokenizer, pkg.config.maxPositions).maxLength
}

export async function devInputs(pkg: ElasticPackage, dev: string, seq: number, limit?: number): Promise<DevExample[]> {
  const encoder = new TextEncoder(pkg.tokenizer, pkg.config.maxPositions)
  const examples = await readDevSet(dev, encoder, pkg.config.labels.length, limit)
  return examples.map((e) => ({ ids: fitIds(e.ids, seq), label: e.label }))
}
