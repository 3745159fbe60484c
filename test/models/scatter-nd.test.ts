// SPDX-License-Identifier: Apache-2.0
// ScatterND (swin_t builds its shifted-window mask with it): rows and single elements replaced at run-time
// indices, negative ones counting from the end, as onnxruntime computes them; an index outside its dim
// is a typed error, and the engine keeps working. (Reductions add and mul: the ONNX backend tests.)
import t from 'tap'
import { FlexpipeError, open, tensor } from '../../lib/index.js'
import { compareTensors } from '../helpers/compare.js'
import { makeModel, tempFile } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

function model(depth: number): Uint8Array {
  return makeModel({
    opset: 16,
    inputs: [
      { name: 'data', dtype: 'float32', dims: [4, 3] },
      { name: 'idx', dtype: 'int64', dims: [2, depth] },
      { name: 'upd', dtype: 'float32', dims: depth === 1 ? [2, 3] : [2] },
    ],
    outputs: [{ name: 'y', dtype: 'float32' }],
    nodes: [{ op: 'ScatterND', inputs: ['data', 'idx', 'upd'], outputs: ['y'] }],
  })
}

const data = () => tensor('float32', [4, 3], Float32Array.from({ length: 12 }, (_, i) => i))

t.test('rows and elements at run-time indices match onnxruntime', async (t) => {
  for (const [depth, idx, upd] of [
    [1, [2n, -1n], [10, 11, 12, 20, 21, 22]],
    [2, [0n, 1n, -2n, -3n], [7, 8]],
  ] as const) {
    const path = tempFile(`scatternd-${depth}.onnx`, model(depth))
    const feeds = {
      data: data(),
      idx: tensor('int64', [2, depth], BigInt64Array.from(idx)),
      upd: tensor('float32', depth === 1 ? [2, 3] : [2], Float32Array.from(upd)),
    }
    const want = await runOrt(path, feeds)
    const engine = await open(path)
    const got = await engine.infer(feeds)
    const r = compareTensors(got.y!, want.y!, 0, 0)
    t.ok(r.ok, `depth ${depth}: equal to onnxruntime${r.ok ? '' : ` (${r.reason})`}`)
    await engine.close()
  }
})

t.test('an index outside its dim is a typed error, and the engine keeps working', async (t) => {
  const path = tempFile('scatternd-bad.onnx', model(1))
  const engine = await open(path)
  const upd = tensor('float32', [2, 3], new Float32Array(6).fill(1))
  const bad = { data: data(), idx: tensor('int64', [2, 1], BigInt64Array.from([1n, 4n])), upd }
  const err = await engine.infer(bad).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof FlexpipeError, `rejected with ${(err as Error | undefined)?.name}`)
  t.match((err as Error).message, /index out of range/)
  const ok = await engine.infer({ ...bad, idx: tensor('int64', [2, 1], BigInt64Array.from([1n, 3n])) })
  t.same(Array.from(ok.y!.data as Float32Array).slice(3, 6), [1, 1, 1])
  await engine.close()
})
