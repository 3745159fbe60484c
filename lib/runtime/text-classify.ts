// SPDX-License-Identifier: Apache-2.0
// classify(): text in, label out, on top of an engine that runs token ids (the elastic engine): the
// model's own tokenizer, the ids cut to the plan's sequence length (keeping the closing special token),
// and a softmax over the logits.
import { ArgumentError } from '../errors.js'
import type { TextEncoder } from '../model/tokenize.js'
import type { RunTimes } from './elastic-runner.js'

export interface Classification {
  readonly label: string
  readonly index: number
  /** Softmax probability of the label. */
  readonly score: number
  readonly scores: readonly number[]
  readonly logits: readonly number[]
  /** Tokens fed (special tokens included) and whether the text was truncated to fit. */
  readonly tokens: number
  readonly truncated: boolean
  /** Wall time of the model run (tokenization excluded). */
  readonly ms: number
}

/** Classifies each text with `inferIds`, one inference per text, in order. */
export async function classifyTexts(
  texts: string | readonly string[],
  encoder: TextEncoder,
  seq: number,
  labels: readonly string[],
  inferIds: (ids: readonly number[]) => Promise<{ logits: Float32Array; times: RunTimes }>,
): Promise<Classification[]> {
  const list = typeof texts === 'string' ? [texts] : texts
  if (!Array.isArray(list) || list.some((t) => typeof t !== 'string')) throw new ArgumentError('classify: expected a string or an array of strings')
  const out: Classification[] = []
  for (const text of list) {
    const enc = encoder.encode(text)
    const ids = enc.ids.length > seq ? [...enc.ids.slice(0, seq - 1), enc.ids[enc.ids.length - 1]!] : enc.ids
    const { logits, times } = await inferIds(ids)
    out.push({ ...softmaxLabel(logits, labels), tokens: ids.length, truncated: enc.fullLength > ids.length, ms: times.totalMs })
  }
  return out
}

/** The label with the highest softmax probability, and every score. */
function softmaxLabel(logits: Float32Array, labels: readonly string[]): Pick<Classification, 'label' | 'index' | 'score' | 'scores' | 'logits'> {
  const max = Math.max(...logits)
  const exps = Array.from(logits, (v) => Math.exp(v - max))
  const sum = exps.reduce((a, b) => a + b, 0)
  const scores = exps.map((x) => x / sum)
  let index = 0
  for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[index]!) index = i
  return { label: labels[index]!, index, score: scores[index]!, scores, logits: Array.from(logits) }
}
