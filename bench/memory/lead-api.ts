// SPDX-License-Identifier: Apache-2.0
// The budgeted engine API (prepare(), open(fpk, { memoryBudget, ... })) as this benchmark codes
// against it, reached through lib/index.ts so the benchmark builds before and after the API lands.
import { copyFileSync, statSync } from 'node:fs'
import * as lib from '../../lib/index.js'
import type { BudgetOpenOptions, PrepareOptions, PrepareReport } from './configs.js'

type PrepareFn = (onnx: string, out: string, options: PrepareOptions) => Promise<PrepareReport>
type OpenFn = (path: string, options?: BudgetOpenOptions) => Promise<lib.Engine>

/**
 * FLEXPIPE_BENCH_FAKE_API=1 tests the harness's plumbing before the API exists: the "package" is a
 * copy of the ONNX file, its minimum budget is the requested budget (else the file size), and open()
 * ignores every budget option. The numbers mean nothing; memory.json records the mode.
 */
export const fakeApi = process.env.FLEXPIPE_BENCH_FAKE_API === '1'

const fakePrepare: PrepareFn = async (onnx, out, options) => {
  const t0 = performance.now()
  copyFileSync(onnx, out)
  const bytes = statSync(out).size
  return { minimumBudget: options.budget ?? bytes, layers: 0, slicedLayers: 0, packageBytes: bytes, ms: performance.now() - t0 }
}

const fakeOpen: OpenFn = (path, options) => lib.open(path as `${string}.onnx`, options?.threads === undefined ? {} : { threads: options.threads })

/** prepare(), once lib/index.ts exports it; undefined before. */
export const prepareApi = fakeApi ? fakePrepare : (lib as unknown as { prepare?: PrepareFn }).prepare

/** open() with the budget options. */
export const openBudgeted = fakeApi ? fakeOpen : (lib.open as unknown as OpenFn)

/** engine.minimumBudget (bytes), where the engine has it. */
export const minimumBudgetOf = (engine: lib.Engine): number | undefined => (engine as unknown as { minimumBudget?: number }).minimumBudget
