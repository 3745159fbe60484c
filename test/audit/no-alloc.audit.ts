// SPDX-License-Identifier: Apache-2.0
// The inference path allocates nothing: run and readFile work, counted by the allocation audit build.
//
// Needs the audit build (FLEXPIPE_NO_URING=1 FLEXPIPE_ALLOC_AUDIT=1 npx cmake-js compile --out build-cmake,
// then FLEXPIPE_ADDON=$PWD/build-cmake/Release/flexpipe.node); it fails, not skips, on any other build.
// Named *.audit.ts so `npm test` (dist/test/**/*.test.js) does not pick it up; .ci/run runs it.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { open, type Tensor, type TensorInfo } from '../../lib/index.js'
import { binding } from '../../lib/native/binding.js'
import { fixtures, randomFloat, randomInt64 } from '../helpers/data.js'
import { tempFile } from '../helpers/make-model.js'
import { opCode, program } from '../helpers/program.js'
import { gaussianLayer } from '../helpers/quant.js'

const testing = binding()._testing

t.test('the addon is the allocation audit build and the audit sees allocations', async (t) => {
  t.equal(testing.allocAudit().enabled, true, 'allocAudit().enabled (build with FLEXPIPE_ALLOC_AUDIT=1 and load it via FLEXPIPE_ADDON)')
  testing.allocAuditReset()
  await testing.allocAuditProbe(5)
  t.equal(testing.allocAudit().allocations, 10, 'the probe\'s 5 malloc + 5 new[] inside worker work are counted')
  testing.allocAuditReset()
  t.equal(testing.allocAudit().allocations, 0, 'reset clears the count')
  const s = new (binding().Session)(1, 'pread')
  s.resize(1 << 20, 0) // allocates on the JS thread, outside any worker: not counted
  s.dispose()
  t.equal(testing.allocAudit().allocations, 0, 'JS-thread allocations outside worker work are not counted')
})

/** Inputs for an engine's declared inputs: symbolic dims become 1 (batch) or 8. */
function inputsFor(inputs: readonly TensorInfo[]): Record<string, Tensor> {
  const out: Record<string, Tensor> = {}
  inputs.forEach((input, i) => {
    const dims = (input.dims ?? []).map((d) => (typeof d === 'number' ? d : d === 'batch' ? 1 : 8))
    out[input.name] = input.dtype === 'int64' ? randomInt64(dims, 10 + i, 2) : randomFloat(dims, 10 + i)
  })
  return out
}

const models = ['resnet_small.onnx', 'resnet_small_external.onnx', 'mobilenetv2_small.onnx', 'bert_tiny.onnx', 'vit_tiny.onnx']

for (const model of models) {
  for (const threads of [1, 2]) {
    t.test(`${model}, ${threads} thread(s): infer() allocates nothing after the first call`, async (t) => {
      const engine = await open(join(fixtures, 'models', model), { threads })
      t.teardown(() => engine.close())
      const inputs = inputsFor(engine.inputs)
      const first = await engine.infer(inputs) // warm-up: plans, folds and prepacks may allocate
      testing.allocAuditReset()
      for (let i = 0; i < 3; i++) {
        const again = await engine.infer(inputs)
        t.same(Object.keys(again), Object.keys(first))
      }
      t.equal(testing.allocAudit().allocations, 0, 'allocations inside run work over 3 infer() calls')
    })
  }
}

for (const io of ['uring', 'pread'] as const) {
  t.test(`readFile (${io}) allocates nothing, buffered, direct and throttled`, async (t) => {
    const s = new (binding().Session)(2, io)
    t.teardown(() => s.dispose())
    const size = 3 * (1 << 20) + 8192
    const path = tempFile('audit.bin', new Uint8Array(size).fill(5))
    s.resize(size, 0)
    testing.allocAuditReset()
    await s.readFile(path, new Float64Array([0, size, 0]))
    await s.readFile(path, new Float64Array([0, size, 0]), { direct: true })
    await s.readFile(path, new Float64Array([4096, 1 << 20, 0, 0, 4096, 1 << 20]), { direct: true, bandwidth: 1e9 })
    await s.readFile(path, new Float64Array([100, 5000, 64]), { direct: true })
    t.equal(testing.allocAudit().allocations, 0, 'allocations inside read work')
    writeFileSync(path, new Uint8Array(10))
    await t.rejects(s.readFile(path, new Float64Array([0, size, 0])), { code: 'ERR_FLEXPIPE_IO' })
    t.comment(`an error builds its message (allocations: ${testing.allocAudit().allocations}); only the success path must be free`)
  })
}

t.test('a budgeted engine streaming weights (runPipeline: load and compute lanes, gate waits) allocates nothing per infer()', async (t) => {
  const { preparedPackage, ocr } = await import('../helpers/budget.js')
  const { openPackage } = await import('../../lib/index.js')
  const { path, report } = await preparedPackage(ocr.det)
  const feeds = await ocr.det.feeds()
  for (const threads of [1, 2]) {
    for (const throttle of [undefined, 400e6]) {
      const engine = await openPackage(path, { threads, memoryBudget: report.minimumBudget, ...(throttle ? { ioBandwidth: throttle } : {}) })
      const first = await engine.infer(feeds)
      t.ok(engine.stats().loadsPerInference > 0, `at its minimum budget the package streams weights (${engine.stats().loadsPerInference} loads)`)
      testing.allocAuditReset()
      for (let i = 0; i < 3; i++) {
        const again = await engine.infer(feeds)
        t.same(Object.keys(again), Object.keys(first))
      }
      t.equal(testing.allocAudit().allocations, 0, `${threads} thread(s)${throttle ? ', throttled' : ''}: allocations inside runPipeline work over 3 infer() calls`)
      await engine.close()
    }
  }
})

t.test('the elastic executor: dequantization, partial layers and staged + embedding reads allocate nothing', async (t) => {
  const { mkdtemp, rm } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { writeTinyEncoder } = await import('../helpers/tiny-encoder.js')
  const { prepareElastic } = await import('../../lib/prepare/prepare-elastic.js')
  const { readElasticPackage } = await import('../../lib/package/elastic-manifest.js')
  const { ElasticRunner } = await import('../../lib/runtime/elastic-runner.js')
  const dir = await mkdtemp(join(tmpdir(), 'flexpipe-audit-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeTinyEncoder(join(dir, 'm'))
  await prepareElastic(join(dir, 'm'), join(dir, 'm.fpk'))
  const pkg = await readElasticPackage(join(dir, 'm.fpk'))
  for (const threads of [1, 2]) {
    const x = await ElasticRunner.open(join(dir, 'm.fpk'), pkg.config, pkg.blobs, { threads, io: 'pread' })
    const L = pkg.config.layers
    const M = pkg.config.heads
    await x.apply({
      depth: L,
      width: M,
      seq: 16,
      bits: Array.from({ length: L }, (_, l) => Array.from({ length: M }, (_, h) => [2, 3, 6, 32][(l + h) % 4]!)),
      preloaded: Array.from({ length: L }, (_, l) => Array.from({ length: M }, (_, h) => (l + h) % 3 === 0)),
    })
    await x.run([2, 5, 6, 7, 3], { direct: true }) // warm-up
    testing.allocAuditReset()
    for (let i = 0; i < 3; i++) await x.run([2, 9, 10, 11, 12, 3], { direct: true })
    t.equal(testing.allocAudit().allocations, 0, `${threads} thread(s): allocations inside run and readFile work over 3 inferences`)
    x.dispose()
  }
})

for (const threads of [1, 2]) {
  t.test(`DequantizeShard in a program, ${threads} thread(s): runs allocate nothing`, async (t) => {
    const b = binding()
    const n = 2 * 384 * 256 // over the op's serial threshold, so 2 threads really split it
    const layer = gaussianLayer({ n, seed: 3, std: 0.04, outliers: 40 })
    const s = new b.Session(threads, 'pread')
    t.teardown(() => s.dispose())
    const blobs = [4, 6].map((bits) => ({ bits, data: b.quantizeLayer(layer, 1, bits).blobs[0]! }))
    s.resize(2 * (1 << 20) + 4 * n + 4096, 0)
    const ids = blobs.map(({ bits, data }, i) => {
      s.write(i << 20, data)
      const desc = program([[0, i << 20, 2, data.length], [1, 0, 1, n / 256, 128], [1, 2 * n, 1, n / 256, 128]], [[opCode('DequantizeShard'), 1, 2, 1, 0, 0, 1, 2, bits]])
      return s.addProgram(desc)
    })
    const out = [new Float32Array(n / 2), new Float32Array(n / 2)]
    for (const id of ids) await s.run(id, 2 << 20, [], [[1, out[0]!], [2, out[1]!]]) // warm-up
    testing.allocAuditReset()
    for (let i = 0; i < 3; i++) for (const id of ids) await s.run(id, 2 << 20, [], [])
    t.equal(testing.allocAudit().allocations, 0, 'allocations inside run work over 6 DequantizeShard runs')
  })
}
