// SPDX-License-Identifier: Apache-2.0
// Deterministic test data: seeded random tensors and fixture paths.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tensor, type Tensor } from '../../lib/index.js'
import { seededRandom } from '../../lib/cli/inputs.js'

/** The repository root (tests run from dist/test/...). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
export const fixtures = join(repoRoot, 'test', 'fixtures')
export const ocrAssets = join(repoRoot, 'node_modules', '@gutenye', 'ocr-models', 'assets')

export function randomFloat(dims: number[], seed: number, scale = 1): Tensor {
  const rand = seededRandom(seed)
  const t = tensor('float32', dims)
  const d = t.data as Float32Array
  for (let i = 0; i < d.length; i++) d[i] = (rand() * 2 - 1) * scale
  return t
}

export function randomInt64(dims: number[], seed: number, max: number): Tensor {
  const rand = seededRandom(seed)
  const t = tensor('int64', dims)
  const d = t.data as BigInt64Array
  for (let i = 0; i < d.length; i++) d[i] = BigInt(Math.floor(rand() * max))
  return t
}

/** A fixed shuffle of `xs` (the shape tests call each shape after a call of another). */
export function shuffled<T>(xs: readonly T[]): T[] {
  const out = xs.slice()
  for (let i = out.length - 1; i > 0; i--) {
    const j = (i * 7 + 3) % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}
