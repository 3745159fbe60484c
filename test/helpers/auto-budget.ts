// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the memoryBudget: 'auto' tests: a package whose plan changes visibly when its budget
// drops by a few MB (two 8 MiB weights and four of 1 MiB), its feeds and its unbudgeted outputs.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import tap from 'tap'
import { openPackage, prepare, type Tensor } from '../../lib/index.js'
import { tempDir } from './budget.js'
import { mlpModel, seededInput, seededWeights } from './conv-graph.js'


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
  writeFileSync(onnx, mlpModel(seededWeights(71), 4096, 0.03))
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
