// SPDX-License-Identifier: Apache-2.0
// Bad models and bad feeds are rejected with typed errors; none crashes the process.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import {
  DisposedError,
  InputError,
  ModelFormatError,
  ShapeError,
  UnsupportedOperatorError,
  open,
  tensor,
} from '../../lib/index.js'
import { fixtures, randomFloat, randomInt64 } from '../helpers/data.js'
import { makeModel, tempFile } from '../helpers/make-model.js'

const resnet = join(fixtures, 'models', 'resnet_small.onnx')
const bert = join(fixtures, 'models', 'bert_tiny.onnx')

t.test('a file that is not ONNX is rejected with ERR_FLEXPIPE_MODEL_FORMAT', async (t) => {
  const path = tempFile('not-a-model.onnx', 'hello, this is plain text and not a protobuf\n'.repeat(20))
  await t.rejects(open(path), ModelFormatError)
  await t.rejects(open(path), { code: 'ERR_FLEXPIPE_MODEL_FORMAT' })
})

t.test('a truncated ONNX file is rejected with ERR_FLEXPIPE_MODEL_FORMAT', async (t) => {
  const bytes = readFileSync(resnet)
  for (const fraction of [0.5, 0.9, 0.999]) {
    const path = tempFile('truncated.onnx', bytes.subarray(0, Math.floor(bytes.length * fraction)))
    await t.rejects(open(path), { code: 'ERR_FLEXPIPE_MODEL_FORMAT' }, `cut at ${fraction}`)
  }
})

t.test('a missing file is an IO error', async (t) => {
  await t.rejects(open('/nonexistent/model.onnx'), { code: 'ERR_FLEXPIPE_IO' })
})

t.test('an unsupported operator names the node, op type and opset', async (t) => {
  const path = tempFile(
    'unsupported.onnx',
    makeModel({
      opset: 15,
      inputs: [{ name: 'x', dtype: 'float32', dims: [2, 3] }],
      outputs: [{ name: 'y', dtype: 'float32' }],
      nodes: [
        { op: 'Relu', inputs: ['x'], outputs: ['h'] },
        { op: 'FancyNewOp', inputs: ['h'], outputs: ['y'], name: 'my_fancy_node' },
      ],
    }),
  )
  const err = await open(path).then(
    () => undefined,
    (e: unknown) => e,
  )
  t.type(err, UnsupportedOperatorError)
  const u = err as UnsupportedOperatorError
  t.equal(u.code, 'ERR_FLEXPIPE_UNSUPPORTED_OPERATOR')
  t.equal(u.node, 'my_fancy_node')
  t.equal(u.opType, 'FancyNewOp')
  t.equal(u.opset, 15)
  t.match(u.message, /FancyNewOp.*opset 15.*my_fancy_node/)
})

t.test('an operator from a custom domain is unsupported', async (t) => {
  const path = tempFile(
    'custom-domain.onnx',
    makeModel({
      inputs: [{ name: 'x', dtype: 'float32', dims: [2] }],
      outputs: [{ name: 'y', dtype: 'float32' }],
      nodes: [{ op: 'Relu', domain: 'com.example', inputs: ['x'], outputs: ['y'] }],
    }),
  )
  await t.rejects(open(path), { code: 'ERR_FLEXPIPE_UNSUPPORTED_OPERATOR', opType: 'com.example.Relu' })
})

t.test('feeds are checked: missing, unknown, wrong dtype, wrong rank, wrong fixed dim', async (t) => {
  const engine = await open(resnet, { threads: 1 })
  t.teardown(() => engine.close())
  await t.rejects(engine.infer({}), { code: 'ERR_FLEXPIPE_INPUT', message: /missing input 'input'/ })
  await t.rejects(engine.infer({ input: randomFloat([1, 3, 64, 64], 1), extra: randomFloat([1], 1) }), InputError)
  await t.rejects(engine.infer({ input: tensor('int32', [1, 3, 64, 64]) }), { code: 'ERR_FLEXPIPE_INPUT', message: /dtype float32/ })
  await t.rejects(engine.infer({ input: randomFloat([3, 64, 64], 1) }), { code: 'ERR_FLEXPIPE_SHAPE', message: /rank 4/ })
  await t.rejects(engine.infer({ input: randomFloat([1, 4, 64, 64], 1) }), { code: 'ERR_FLEXPIPE_SHAPE', message: /dim 1 must be 3/ })
  await t.rejects(
    engine.infer({ input: { dtype: 'float32', dims: [1, 3, 64, 64], data: new Float32Array(5) } }),
    { code: 'ERR_FLEXPIPE_INPUT', message: /need 12288 elements/ },
  )
  await t.rejects(engine.infer(null as never), InputError)
  // the engine still works after rejected feeds
  const out = await engine.infer({ input: randomFloat([1, 3, 64, 64], 1) })
  t.same(out.logits!.dims, [1, 100])
})

t.test('two inputs disagreeing on a symbolic dim (seq_len) are a shape error', async (t) => {
  const engine = await open(bert, { threads: 1 })
  t.teardown(() => engine.close())
  t.same(engine.inputs.map((i) => i.dims), [
    ['batch', 'seq_len'],
    ['batch', 'seq_len'],
  ])
  await t.rejects(
    engine.infer({ input_ids: randomInt64([1, 16], 1, 1000), attention_mask: randomInt64([1, 8], 2, 2) }),
    { code: 'ERR_FLEXPIPE_SHAPE', message: /seq_len/ },
  )
})

t.test('a feed that contradicts the graph inside (MatMul inner dims) is a shape error naming the node', async (t) => {
  const path = tempFile(
    'matmul-mismatch.onnx',
    makeModel({
      inputs: [{ name: 'x', dtype: 'float32', dims: ['n', 'k'] }],
      outputs: [{ name: 'y', dtype: 'float32' }],
      initializers: [{ name: 'w', dims: [4, 2], floats: [1, 2, 3, 4, 5, 6, 7, 8] }],
      nodes: [{ op: 'MatMul', inputs: ['x', 'w'], outputs: ['y'], name: 'proj' }],
    }),
  )
  const engine = await open(path, { threads: 1 })
  t.teardown(() => engine.close())
  await t.rejects(engine.infer({ x: randomFloat([3, 5], 1) }), { code: 'ERR_FLEXPIPE_SHAPE', message: /proj/ })
  const ok = await engine.infer({ x: randomFloat([3, 4], 1) })
  t.same(ok.y!.dims, [3, 2])
})

t.test('infer after close rejects with ERR_FLEXPIPE_DISPOSED; close is idempotent', async (t) => {
  const engine = await open(resnet, { threads: 1 })
  await engine.close()
  await engine.close()
  await t.rejects(engine.infer({ input: randomFloat([1, 3, 64, 64], 1) }), DisposedError)
  t.throws(() => engine.stats(), { code: 'ERR_FLEXPIPE_DISPOSED' })
})

t.test('bad options are argument errors', async (t) => {
  await t.rejects(open(resnet, { threads: 0 }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /threads/ })
  await t.rejects(open(resnet, { io: 'nope' as never }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /io/ })
})

t.test('a shape error has the ShapeError class', async (t) => {
  const engine = await open(resnet, { threads: 1 })
  t.teardown(() => engine.close())
  await t.rejects(engine.infer({ input: randomFloat([1, 4, 64, 64], 1) }), ShapeError)
})

t.test('an input smaller than a conv or pool window is a shape error naming the node, and larger ones run', async (t) => {
  // x -> Conv 3x3 stride 2, no padding -> MaxPool 3x3 stride 2 (fused into the conv) -> y
  const path = tempFile('small-input.onnx', makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 2, 'h', 'w'] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [{ name: 'w', dims: [4, 2, 3, 3], floats: new Array(72).fill(0.1) }],
    nodes: [
      { op: 'Conv', inputs: ['x', 'w'], outputs: ['c'], ints: { kernel_shape: [3, 3], strides: [2, 2] } },
      { op: 'MaxPool', inputs: ['c'], outputs: ['y'], ints: { kernel_shape: [3, 3], strides: [2, 2] } },
    ],
  }))
  const engine = await open(path as `${string}.onnx`, { threads: 1 })
  t.teardown(() => engine.close())
  for (const [size, node] of [[2, 'Conv'], [4, 'Conv']] as const) {
    const err = await engine.infer({ x: randomFloat([1, 2, size, size], size) }).catch((e: unknown) => e)
    t.ok(err instanceof ShapeError, `${size}x${size}: a ShapeError`)
    t.equal((err as ShapeError).code, 'ERR_FLEXPIPE_SHAPE')
    t.match((err as Error).message, new RegExp(`${node}.*smaller than the window.*give a larger input`))
  }
  const y = await engine.infer({ x: randomFloat([1, 2, 7, 9], 3) })
  t.same(y.y!.dims, [1, 4, 1, 1], 'a 7x9 input: conv 3x4, pool 1x1')
})
