// SPDX-License-Identifier: Apache-2.0
// The model file is mapped while an ONNX model opens and makes its first plan; then the engine lets go
// of every view of it (initializers detached or copied, Constant nodes' tensors copied at import, applied
// plans without their resident writes) and releases it (unmapFile), so that its pages, as large as the
// model, leave the process's RSS at once, not at some later collection. Checked in /proc/self/maps; the
// engine's outputs after the release are the same as before it.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { open, type Tensor } from '../../lib/index.js'
import { fixtures } from '../helpers/data.js'

function mapped(path: string): boolean {
  return readFileSync('/proc/self/maps', 'utf8').includes(path)
}

const ids = (n: number): Record<string, Tensor> => ({
  input_ids: { dtype: 'int64', dims: [1, n], data: new BigInt64Array(n).fill(7n) },
  attention_mask: { dtype: 'int64', dims: [1, n], data: new BigInt64Array(n).fill(1n) },
})

for (const [name, feeds] of [
  ['bert_tiny.onnx', ids(9)],
  ['resnet_small.onnx', { input: { dtype: 'float32', dims: [1, 3, 64, 64], data: new Float32Array(3 * 64 * 64).fill(0.5) } as Tensor }],
  ['gpt2_tiny.onnx', { input_ids: ids(5).input_ids! }],
] as const) {
  t.test(`${name}: the mapping is gone after the first plan`, async (t) => {
    const path = join(fixtures, 'models', name)
    const engine = await open(path as `${string}.onnx`, { threads: 1 })
    t.teardown(() => engine.close())
    t.ok(mapped(path), 'mapped while the model opens')
    const first = await engine.infer(feeds as Record<string, Tensor>)
    t.notOk(mapped(path), 'not mapped after the first plan')
    const again = await engine.infer(feeds as Record<string, Tensor>)
    for (const k of Object.keys(first)) t.same(Array.from(again[k]!.data as Float32Array), Array.from(first[k]!.data as Float32Array), `${k}: the same output after`)
  })
}
