// SPDX-License-Identifier: Apache-2.0
// The memory benchmark's models (the FlexNN evaluation set), their seeded inputs, and where their
// prepared packages live. The measuring child imports this file, so it must not import onnxruntime
// (bench/models/cases.ts does): everything loaded here is part of the child's baseline RSS.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tensor, type Tensor } from '../../lib/index.js'
import { seededRandom } from '../../lib/cli/inputs.js'

/** The repository root (this file runs from dist/bench/memory/). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
export const benchModelDir = join(repoRoot, '.cache', 'bench-models')
export const packageDir = join(repoRoot, '.cache', 'bench-packages')

/** MB in this benchmark is 10^6 bytes, everywhere (tables, budgets, options, plots). */
export const MB = 1e6

export interface MemoryCase {
  readonly name: string
  readonly describe: string
  readonly path: string
  /** Budget (bytes) the curve package is prepared for: the lowest point we ask for (overridable by --floor). */
  readonly floor: number
  /** Budgets (bytes) that must be on the curve because an acceptance check reads them. */
  readonly extraBudgets: readonly number[]
  readonly feeds: () => Record<string, Tensor>
}

function randomFloat(dims: number[], seed: number): Tensor {
  const rand = seededRandom(seed)
  const t = tensor('float32', dims)
  const d = t.data as Float32Array
  for (let i = 0; i < d.length; i++) d[i] = rand() * 2 - 1
  return t
}

function tokenIds(vocab: number, seq: number, seed: number): Tensor {
  const rand = seededRandom(seed)
  const ids = tensor('int64', [1, seq])
  const d = ids.data as BigInt64Array
  for (let i = 0; i < seq; i++) d[i] = BigInt(Math.floor(rand() * vocab))
  return ids
}

const image = (seed: number) => () => ({ input: randomFloat([1, 3, 224, 224], seed) })
const exported = (name: string) => join(benchModelDir, `${name}.onnx`)

// Floors are first guesses below the paper's lowest budgets; prepare() may answer with a higher
// minimum (then the curve starts there) or reject (then the floor is doubled, see memory.bench.ts).
export const memoryCases: readonly MemoryCase[] = [
  { name: 'resnet152', describe: 'ResNet-152 1x3x224x224', path: exported('resnet152'), floor: 40 * MB, extraBudgets: [100 * MB], feeds: image(5) },
  { name: 'vgg19', describe: 'VGG-19 1x3x224x224', path: exported('vgg19'), floor: 50 * MB, extraBudgets: [100 * MB], feeds: image(7) },
  { name: 'vit_b_16', describe: 'ViT-B/16 1x3x224x224', path: exported('vit_b_16'), floor: 60 * MB, extraBudgets: [], feeds: image(8) },
  { name: 'gpt2', describe: 'GPT-2 small, input_ids 1x128', path: exported('gpt2'), floor: 100 * MB, extraBudgets: [], feeds: () => ({ input_ids: tokenIds(50257, 128, 9) }) },
  { name: 'mobilenetv2', describe: 'MobileNetV2 1x3x224x224', path: exported('mobilenetv2'), floor: 8 * MB, extraBudgets: [], feeds: image(2) },
  { name: 'squeezenet', describe: 'SqueezeNet 1.1 1x3x224x224', path: exported('squeezenet'), floor: 4 * MB, extraBudgets: [], feeds: image(3) },
]

export function memoryCase(name: string): MemoryCase {
  const c = memoryCases.find((m) => m.name === name)
  if (c === undefined) throw new Error(`unknown model '${name}'; known: ${memoryCases.map((m) => m.name).join(', ')}`)
  return c
}
