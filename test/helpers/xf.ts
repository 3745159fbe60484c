// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the xf kernel tests (attention, layer norm, softmax, element-wise SIMD): the typed
// `_testing` entries, seeded data, and guarded buffers (misaligned by 4 bytes, canary after the end).
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding } from '../../lib/native/binding.js'

export interface XfTesting {
  isas(): string[]
  xfAttentionWorkspaceFloats(seqKv: number, dh: number): number
  xfAttention(isa: string, o: Record<string, unknown>): void
  xfLayerNormRow(isa: string, x: Float32Array, y: Float32Array, w: Float32Array, b: Float32Array | null, eps: number): [number, number]
  xfSoftmax(isa: string, x: Float32Array, y: Float32Array, n: number, stride: number): void
  xfUnary(isa: string, op: number, x: Float32Array, y: Float32Array, n: number, alpha: number, beta: number): void
  xfBinary(isa: string, op: number, a: Float32Array, sa: number, b: Float32Array, sb: number, y: Float32Array, n: number): void
  xfClip(isa: string, x: Float32Array, y: Float32Array, n: number, lo: number, hi: number): void
}

export const xf = binding()._testing as unknown as XfTesting
export const isas = xf.isas()
export const simdIsas = isas.filter((i) => i !== 'ref')

/** 2^-k. */
export const ulp = (k: number): number => 2 ** -k

/** Uniform floats in [lo, hi), seeded. */
export function random(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const rand = seededRandom(seed)
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * rand()
  return out
}

const canaryValue = -12345.5
const canaryLength = 16

/**
 * A Float32Array view of n elements that starts 4 bytes into its buffer (so it is never 32-byte
 * aligned) and is followed by a canary region; `intact()` says whether the canary survived.
 */
export class Guarded {
  readonly view: Float32Array
  private readonly whole: Float32Array
  constructor(n: number, fill = 0) {
    this.whole = new Float32Array(n + 1 + canaryLength)
    this.whole.fill(canaryValue)
    this.view = this.whole.subarray(1, 1 + n)
    this.view.fill(fill)
  }
  static of(data: Float32Array): Guarded {
    const g = new Guarded(data.length)
    g.view.set(data)
    return g
  }
  intact(): boolean {
    if (this.whole[0] !== canaryValue) return false
    for (let i = this.whole.length - canaryLength; i < this.whole.length; i++) if (this.whole[i] !== canaryValue) return false
    return true
  }
}

/** Lengths 1..67 (every tail of 8- and 16-lane loops several times over), then a few longer ones. */
export const lengths: number[] = [...Array.from({ length: 67 }, (_, i) => i + 1), 97, 128, 257, 1000, 1031]
