// SPDX-License-Identifier: Apache-2.0
// The public API: model description, concurrent infer() calls, plan reuse, dtypes, the CLI.
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { nativeInfo, open, OptionError, supportedOpTypes, tensor, type Tensor } from '../../lib/index.js'
import { fixtures, randomFloat, randomInt64, repoRoot } from '../helpers/data.js'

const resnet = join(fixtures, 'models', 'resnet_small.onnx') as `${string}.onnx`
const bert = join(fixtures, 'models', 'bert_tiny.onnx') as `${string}.onnx`

t.test('engine.inputs and engine.outputs describe names, dtypes and symbolic dims', async (t) => {
  const engine = await open(bert, { threads: 1 })
  t.teardown(() => engine.close())
  t.same(engine.inputs, [
    { name: 'input_ids', dtype: 'int64', dims: ['batch', 'seq_len'] },
    { name: 'attention_mask', dtype: 'int64', dims: ['batch', 'seq_len'] },
  ])
  t.same(engine.outputs.map((o) => [o.name, o.dtype, o.dims]), [
    ['logits', 'float32', ['batch', 3]],
    ['last_hidden_state', 'float32', ['batch', 'seq_len', 64]],
  ])
})

t.test('concurrent infer() calls are queued and each gets its own correct result', async (t) => {
  const engine = await open(resnet, { threads: 2 })
  t.teardown(() => engine.close())
  const inputs = [1, 2, 3, 4, 5].map((seed) => randomFloat([1 + (seed % 2), 3, 64, 64], seed))
  const sequential: Array<Record<string, Tensor>> = []
  for (const input of inputs) sequential.push(await engine.infer({ input }))
  const concurrent = await Promise.all(inputs.map((input) => engine.infer({ input })))
  concurrent.forEach((out, i) => {
    t.same(out.logits!.dims, sequential[i]!.logits!.dims, `call ${i} dims`)
    t.same(Array.from(out.logits!.data as Float32Array), Array.from(sequential[i]!.logits!.data as Float32Array), `call ${i} values`)
  })
  t.equal(engine.stats().plans, 2, 'one plan per input signature (batch 1 and batch 2)')
})

t.test('a batch of two equals two batches of one', async (t) => {
  const engine = await open(resnet, { threads: 1 })
  t.teardown(() => engine.close())
  const a = randomFloat([1, 3, 64, 64], 11)
  const b = randomFloat([1, 3, 64, 64], 12)
  const both = tensor('float32', [2, 3, 64, 64])
  ;(both.data as Float32Array).set(a.data as Float32Array)
  ;(both.data as Float32Array).set(b.data as Float32Array, a.data.length)
  const ya = (await engine.infer({ input: a })).logits!.data as Float32Array
  const yb = (await engine.infer({ input: b })).logits!.data as Float32Array
  const yab = (await engine.infer({ input: both })).logits!.data as Float32Array
  const diff = Math.max(...Array.from(yab).map((v, i) => Math.abs(v - (i < 100 ? ya[i]! : yb[i - 100]!))))
  t.ok(diff < 1e-5, `max diff ${diff}`)
})

t.test('stats report the arena and the reader', async (t) => {
  const engine = await open(bert, { threads: 1 })
  t.teardown(() => engine.close())
  await engine.infer({ input_ids: randomInt64([2, 9], 1, 1000), attention_mask: randomInt64([2, 9], 2, 2) })
  const s = engine.stats()
  t.ok(s.persistentBytes > 500_000, `weights placed in the arena (${s.persistentBytes} bytes)`)
  t.ok(s.arenaBytes >= s.persistentBytes + s.activationBytes, 'arena holds weights and activations')
  t.match(s.reader, /io_uring|pread/)
})

t.test('supportedOpTypes and nativeInfo', async (t) => {
  t.ok(supportedOpTypes().includes('Conv'))
  t.ok(supportedOpTypes().includes('LayerNormalization'))
  t.match(nativeInfo(), { openmp: true })
})

t.test('the CLI runs a model and the demo', async (t) => {
  const cli = join(repoRoot, 'dist', 'lib', 'cli', 'main.js')
  const run = execFileSync(process.execPath, [cli, 'run', bert, '--random', '--dim', 'batch=1', '--dim', 'seq_len=5'], { encoding: 'utf8' })
  t.match(run, /logits: float32 \[1, 3\]/)
  t.match(run, /last_hidden_state: float32 \[1, 5, 64\]/)
  const demo = execFileSync(process.execPath, [cli, 'demo', 'ocr'], { encoding: 'utf8' })
  t.match(demo, /upright\s*: predicted 0°/)
  t.match(demo, /rotated 180°: predicted 180°/)
  const bad = (() => {
    try {
      execFileSync(process.execPath, [cli, 'run', '/nonexistent.onnx'], { encoding: 'utf8', stdio: 'pipe' })
      return ''
    } catch (err) {
      return String((err as { stderr: string }).stderr)
    }
  })()
  t.match(bad, /ERR_FLEXPIPE_IO/)
})

t.test('the CLI answers --help with its usage and an unknown option with a message, not a stack trace', async (t) => {
  const cli = join(repoRoot, 'dist', 'lib', 'cli', 'main.js')
  const help = spawnSync(process.execPath, [cli, 'prepare', '--help'], { encoding: 'utf8' })
  t.equal(help.status, 0, '--help exits 0')
  t.match(help.stdout, /usage:[\s\S]*flexpipe prepare <model.onnx> -o <model.fpk>/)
  const unknown = spawnSync(process.execPath, [cli, 'prepare', 'm.onnx', '--bogus'], { encoding: 'utf8' })
  t.equal(unknown.status, 2, 'an unknown option exits 2')
  t.match(unknown.stderr, /^flexpipe: Unknown option '--bogus'\nusage:/)
  t.notMatch(unknown.stderr, /at .*\.js:\d+/, 'no stack trace')
  const range = spawnSync(process.execPath, [cli, 'prepare', bert, '-o', join(repoRoot, '.cache', 'never.fpk'), '--dim', 'batch=1', '--dim', 'seq_len=128..1'], { encoding: 'utf8' })
  t.not(range.status, 0, 'a reversed range is refused')
  t.match(range.stderr, /seq_len/)
  t.notMatch(range.stderr, /at .*\.js:\d+/, 'no stack trace')
})

t.test('inferProfiled reports every native op with its time and the same outputs as infer', async (t) => {
  const engine = await open(resnet, { threads: 1 })
  t.teardown(() => engine.close())
  const input = randomFloat([1, 3, 64, 64], 21)
  const plain = await engine.infer({ input })
  const { outputs, ops } = await engine.inferProfiled({ input })
  t.same(Array.from(outputs.logits!.data as Float32Array), Array.from(plain.logits!.data as Float32Array))
  t.ok(ops.length >= 20, `${ops.length} ops timed`)
  t.ok(ops.every((o) => o.ms >= 0 && o.node.length > 0), 'every op has a node name and a time')
  t.ok(ops.some((o) => o.opType === 'Conv'), 'convolutions are among them')
})

t.test('open() names the options an ONNX model does not take, unknown or for packages only', async (t) => {
  await t.rejects(open(resnet, { units: ['big', 'little'] } as never), { constructor: OptionError, options: ['units'], message: /^unknown option units: for an ONNX model open\(\) takes threads, io, maxPlans, dims, buckets$/ })
  await t.rejects(open(resnet, { memoryBudget: 1e8, direct: false } as never), { constructor: OptionError, options: ['memoryBudget', 'direct'], message: /only packages run within a memory budget; make one with `flexpipe prepare/ })
  await t.rejects(open(resnet, { threads: 0 }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: 'threads: expected an integer 1..256, got 0' })
  const engine = await open(resnet, { threads: 1, memoryBudget: undefined } as never)
  t.equal(engine.kind, 'onnx', 'an option set to undefined is as if absent')
  await engine.close()
})
