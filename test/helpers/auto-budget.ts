// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the memoryBudget: 'auto' tests: a package whose plan changes visibly when its budget
// drops by a few MB (two 8 MiB weights and four of 1 MiB), its feeds and its unbudgeted outputs.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import tap from 'tap'
import { openPackage, prepare, type Tensor } from '../../lib/index.js'
import { tempDir } from './budget.js'
import { seededInput, seededWeights } from './conv-graph.js'
import { makeModel } from './make-model.js'

/** x [1, 512] -> MatMul 512x4096 -> Relu -> MatMul 4096x512 -> Relu -> 4 x MatMul 512x512. */
function mlp(): Uint8Array {
  const weights = seededWeights(71)
  const small = [0, 1, 2, 3]
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 512] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('w1', [512, 4096], 0.05), weights('w2', [4096, 512], 0.03), ...small.map((i) => weights(`s${i}`, [512, 512], 0.05))],
    nodes: [
      { op: 'MatMul', inputs: ['x', 'w1'], outputs: ['h1'] },
      { op: 'Relu', inputs: ['h1'], outputs: ['a1'] },
      { op: 'MatMul', inputs: ['a1', 'w2'], outputs: ['h2'] },
      { op: 'Relu', inputs: ['h2'], outputs: ['a2'] },
      ...small.map((i) => ({ op: 'MatMul', inputs: [i === 0 ? 'a2' : `m${i - 1}`, `s${i}`], outputs: [i === 3 ? 'y' : `m${i}`] })),
    ],
  })
}

export interface MlpPackage {
  readonly path: string
  readonly onnx: string
  readonly feeds: Record<string, Tensor>
  /** The package's outputs with every weight resident. */
  readonly want: Record<string, Tensor>
  readonly minimumBudget: number
  readonly unlimitedBudget: number
}

let prepared: Promise<MlpPackage> | undefined

/**
 * The MLP prepared into a package (2 threads) and run unbudgeted, once per process (do not modify the
 * package); its temp dir is removed when the root test ends.
 */
export function mlpPackage(): Promise<MlpPackage> {
  prepared ??= preparePackage()
  return prepared
}

async function preparePackage(): Promise<MlpPackage> {
  const dir = tempDir(tap, 'flexpipe-auto-')
  const onnx = join(dir, 'mlp.onnx')
  writeFileSync(onnx, mlp())
  const path = join(dir, 'mlp.fpk')
  const report = await prepare(onnx, path, { threads: 2 })
  const feeds = { x: seededInput([1, 512], 5) }
  const engine = await openPackage(path, { threads: 2 })
  try {
    return { path, onnx, feeds, want: await engine.infer(feeds), minimumBudget: report.minimumBudget, unlimitedBudget: report.unlimitedBudget }
  } finally {
    await engine.close()
  }
}
