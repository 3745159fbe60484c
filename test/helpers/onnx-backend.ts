// SPDX-License-Identifier: Apache-2.0
// Runs ONNX backend node tests (Debian libonnx-testdata): each test is a model.onnx with
// test_data_set_*/input_N.pb and output_N.pb; outputs are compared with rtol 1e-3, atol 1e-5.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { open, supportedOpTypes, type Tensor } from '../../lib/index.js'
import { parseOnnx } from '../../lib/model/onnx-import.js'
import { decodeTensorFile } from '../../lib/model/tensor-proto.js'
import { compareTensors } from './compare.js'

export const backendTestRoot = '/usr/share/libonnx-testdata/data/node'

export interface BackendTest {
  readonly name: string
  readonly dir: string
  /** Op types the test's model uses. */
  readonly ops: readonly string[]
}

export interface BackendResult {
  readonly test: BackendTest
  readonly passed: boolean
  readonly reason?: string
}

/** Every backend test whose model parses, with the op types it uses. */
export function listBackendTests(root = backendTestRoot): BackendTest[] {
  if (!existsSync(root)) return []
  const tests: BackendTest[] = []
  for (const name of readdirSync(root).sort()) {
    const dir = join(root, name)
    const model = join(dir, 'model.onnx')
    if (!existsSync(model)) continue
    let ops: string[]
    try {
      ops = [...new Set(parseOnnx(readFileSync(model), dir, name).nodes.map((n) => (n.domain ? `${n.domain}.${n.opType}` : n.opType)))]
    } catch {
      ops = ['<unparsable>']
    }
    tests.push({ name, dir, ops })
  }
  return tests
}

/** Tests whose ops are all supported by this build: these are the ones the README claims. */
export function claimedTests(tests: readonly BackendTest[]): BackendTest[] {
  const supported = new Set(supportedOpTypes())
  return tests.filter((t) => t.ops.every((op) => supported.has(op)))
}

function readTensors(dir: string, prefix: string): Tensor[] {
  const out: Tensor[] = []
  for (let i = 0; existsSync(join(dir, `${prefix}_${i}.pb`)); i++) {
    out.push(decodeTensorFile(readFileSync(join(dir, `${prefix}_${i}.pb`)), `${dir}/${prefix}_${i}.pb`) as Tensor)
  }
  return out
}

export async function runBackendTest(test: BackendTest, threads = 1): Promise<BackendResult> {
  let engine
  try {
    engine = await open(join(test.dir, 'model.onnx'), { threads })
  } catch (err) {
    return { test, passed: false, reason: `open: ${(err as Error).message}` }
  }
  try {
    const sets = readdirSync(test.dir).filter((d) => d.startsWith('test_data_set_')).sort()
    for (const set of sets) {
      const dir = join(test.dir, set)
      const inputs = readTensors(dir, 'input')
      const want = readTensors(dir, 'output')
      const feeds: Record<string, Tensor> = {}
      engine.inputs.forEach((info, i) => {
        if (inputs[i] !== undefined) feeds[info.name] = inputs[i]!
      })
      const got = await engine.infer(feeds)
      for (const [i, info] of engine.outputs.entries()) {
        if (want[i] === undefined) continue
        const g = got[info.name]!
        if (g.dtype !== want[i]!.dtype) return { test, passed: false, reason: `${set} output ${info.name}: dtype ${g.dtype} != ${want[i]!.dtype}` }
        const c = compareTensors(g, want[i]!, 1e-5, 1e-3)
        if (!c.ok) return { test, passed: false, reason: `${set} output ${info.name}: ${c.reason}` }
      }
    }
    return { test, passed: true }
  } catch (err) {
    return { test, passed: false, reason: (err as Error).message }
  } finally {
    await engine.close()
  }
}
