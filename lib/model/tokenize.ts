// SPDX-License-Identifier: Apache-2.0
// Text -> token ids with the model's own tokenizer.json, through @huggingface/tokenizers.
//
// The library encodes but does not apply tokenizer.json's `truncation` section, so this does, by the
// tokenizer's rules: the special tokens the post-processor's single-sequence template adds stay, the
// sequence between them is cut to max_length minus their count, keeping its head (direction 'Right',
// the default) or its tail ('Left'). Over-long text is therefore truncated, never rejected; text is
// also cut to `maxChars` characters before encoding (a bound on work, far beyond what max_length keeps).
import { createRequire } from 'node:module'
import type { Tokenizer } from '@huggingface/tokenizers'
import { ModelFormatError } from '../errors.js'

type TokenizerClass = typeof Tokenizer
let tokenizerClass: TokenizerClass | undefined

/** The library's Tokenizer, loaded (its CommonJS build) the first time a text model needs it. */
function loadTokenizer(): TokenizerClass {
  tokenizerClass ??= (createRequire(import.meta.url)('@huggingface/tokenizers') as { Tokenizer: TokenizerClass }).Tokenizer
  return tokenizerClass
}

export interface Encoded {
  readonly ids: readonly number[]
  /** Tokens the text had before truncation (special tokens included). */
  readonly fullLength: number
}

interface TemplatePiece {
  SpecialToken?: { id: string }
  Sequence?: { id: string }
}

export class TextEncoder {
  readonly maxLength: number
  private readonly tok: Tokenizer
  private readonly prefix: number
  private readonly suffix: number
  private readonly keepTail: boolean
  private readonly maxChars: number

  constructor(json: unknown, maxPositions: number) {
    if (json === null || typeof json !== 'object') throw new ModelFormatError('tokenizer.json is not a JSON object')
    const j = json as { truncation?: { max_length?: number; direction?: string } | null; post_processor?: { type?: string; single?: TemplatePiece[] } | null }
    try {
      this.tok = new (loadTokenizer())(json, {})
    } catch (err) {
      throw new ModelFormatError(`tokenizer.json could not be loaded by @huggingface/tokenizers: ${(err as Error).message}`)
    }
    const declared = j.truncation?.max_length
    this.maxLength = Math.min(maxPositions, typeof declared === 'number' && declared > 0 ? declared : maxPositions)
    this.keepTail = j.truncation?.direction === 'Left'
    const pp = j.post_processor
    if (pp?.type === 'TemplateProcessing' && Array.isArray(pp.single)) {
      const at = pp.single.findIndex((p) => p.Sequence !== undefined)
      this.prefix = at < 0 ? 0 : at
      this.suffix = at < 0 ? 0 : pp.single.length - at - 1
    } else if (pp?.type === 'BertProcessing' || pp?.type === 'RobertaProcessing') {
      this.prefix = 1
      this.suffix = 1
    } else {
      this.prefix = 0
      this.suffix = 0
    }
    if (this.prefix + this.suffix >= this.maxLength) throw new ModelFormatError(`tokenizer.json: max_length ${this.maxLength} leaves no room for text`)
    this.maxChars = this.maxLength * 100
  }

  encode(text: string): Encoded {
    if (typeof text !== 'string') throw new TypeError(`expected a string, got ${typeof text}`)
    const ids = this.tok.encode(text.length > this.maxChars ? text.slice(0, this.maxChars) : text).ids as number[]
    if (ids.length <= this.maxLength) return { ids, fullLength: ids.length }
    const body = ids.slice(this.prefix, ids.length - this.suffix)
    const room = this.maxLength - this.prefix - this.suffix
    const kept = this.keepTail ? body.slice(body.length - room) : body.slice(0, room)
    return { ids: [...ids.slice(0, this.prefix), ...kept, ...ids.slice(ids.length - this.suffix)], fullLength: ids.length }
  }
}
