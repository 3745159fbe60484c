// SPDX-License-Identifier: Apache-2.0
// The elastic engine on the real fixture (test/fixtures/spam-encoder): prepare --elastic, the full model
// from its fp32 shards against onnxruntime-node on model.onnx, TextEncoder against the stored Python ids,
// quantized sub-models still classifying, and the README's demo command.
import { execFileSync } from 'node:child_process'
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { readElasticPackage } from '../../lib/package/elastic-manifest.js'
import { measuredAccuracy } from '../../lib/runtime/elastic-engine.js'
import { prepareElastic } from '../../lib/prepare/prepare-elastic.js'
import { ElasticRunner, type RunPlan } from '../../lib/runtime/elastic-runner.js'
import { TextEncoder } from '../../lib/model/tokenize.js'
import { open, tensor } from '../../lib/index.js'
import { fixtures, repoRoot } from '../helpers/data.js'
import { planElastic, planLoadAndExec, planStdPL, type ElasticPlan, type ElasticProfile } from '../../lib/plan/elastic/index.js'
import { runOrt } from '../helpers/ort.js'

const modelDir = join(fixtures, 'spam-encoder')
const dir = await mkdtemp(join(tmpdir(), 'flexpipe-spam-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const pkgPath = join(dir, 'spam.fpk')
const report = await prepareElastic(modelDir, pkgPath)
const pkg = await readElasticPackage(pkgPath)
const encoder = new TextEncoder(pkg.tokenizer, pkg.config.maxPositions)
const dev = (await readFile(join(modelDir, 'dev.jsonl'), 'utf8'))
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { text: string; label: number })
const sample = JSON.parse(await readFile(join(modelDir, 'tokenized-sample.json'), 'utf8')) as { ids: number[][] }
const { layers: L, heads: M } = pkg.config
const fill = <T>(v: T): T[][] => Array.from({ length: L }, () => new Array<T>(M).fill(v))

t.test('prepare --elastic on the fixture', async (t) => {
  t.equal(L * M, 48)
  t.ok(report.outlierFraction > 0 && report.outlierFraction < 0.01, `outlier fraction ${(report.outlierFraction * 100).toFixed(3)}%`)
  t.ok(report.ms < 60_000, `prepared in ${(report.ms / 1000).toFixed(1)} s`)
})

t.test("the fixture's importance profile: no shard gains from fp32 alone; its sub-model table picks the plan", async (t) => {
  const a = measuredAccuracy(pkg.meta.importance, L, M, pkg.meta.bitwidths as number[])
  if (a === undefined) return void t.fail('the package carries the importance profile of importance.json')
  t.equal(a.highest, a.lowest, 'fp32 and 2 bits measure the same dev accuracy')
  t.ok(a.gain.flat().every((g) => g <= 0), 'no shard gains')
  t.equal(measuredAccuracy({ ...(pkg.meta.importance as object), accuracy: [[0.9]] }, L, M, pkg.meta.bitwidths as number[]), undefined, 'a table of another shape is ignored')
  // A profile where IO is free up to the whole model at fp32: the seed's rule would read fp32.
  const bitwidths = pkg.meta.bitwidths as number[]
  const profile: ElasticProfile = { layers: L, shardsPerLayer: M, bitwidths, shardBytes: (bits) => bits * 1000, readMsPerByte: 1e-6, readMsPerJob: 0, layerComputeMs: Array.from({ length: M + 1 }, (_, m) => m), fixedMs: 0 }
  const ranking = (pkg.meta.importance as { ranking: Array<[number, number]> }).ranking.map(([layer, shard]) => ({ layer, shard }))
  t.equal(planElastic(profile, ranking, { targetMs: 1000 }).uniformBits, 32, 'seed rule: fp32')
  const { subModels, ...fullModelOnly } = a
  const plan = planElastic(profile, { ranking, accuracy: fullModelOnly }, { targetMs: 1000 })
  t.same([plan.uniformBits, plan.bitsHistogram[2]], [2, L * M], 'measured: every shard at 2 bits')

  // With the table of every sub-model at every bitwidth (importance.json's subModelAccuracy): the
  // most accurate plan that meets T, never less accurate than a baseline planned on the same profile.
  if (subModels === undefined) return void t.fail("importance.json carries the sub-model table (flexpipe profile --dev)")
  const acc = (e: { depth: number; width: number; uniformBits: number }): number => subModels[e.depth - 1]![e.width - 1]![bitwidths.indexOf(e.uniformBits)]!
  const best = Math.max(...subModels.flat(2))
  t.equal(acc(planElastic(profile, { ranking, accuracy: a }, { targetMs: 1000 })), best, 'with time to spare, the most accurate entry of the table')
  // Reads that matter: an fp32 shard takes 3.2 ms, a 2-bit one 0.2 ms; a layer of m shards m ms.
  const slow: ElasticProfile = { ...profile, readMsPerByte: 1e-4 }
  let compared = 0
  for (const targetMs of [4, 8, 12, 20, 30, 45, 60]) {
    const ours = planElastic(slow, { ranking, accuracy: a }, { targetMs })
    for (const base of [...bitwidths.map((bits) => () => planStdPL(slow, { targetMs, bits })), () => planLoadAndExec(slow, { targetMs })]) {
      let b: ElasticPlan
      try {
        b = base()
      } catch {
        continue
      }
      compared++
      t.ok(acc(ours) >= acc(b), `T=${targetMs}: ${ours.depth}x${ours.width}@${ours.uniformBits} (${acc(ours)}) vs ${b.planner} ${b.depth}x${b.width}@${b.uniformBits} (${acc(b)})`)
    }
  }
  t.ok(compared >= 20, `${compared} baseline plans compared`)
})

t.test('prepare --elastic from the ONNX export gives the same package as from the Hugging Face folder', async (t) => {
  const onnxPkgPath = join(dir, 'spam-from-onnx.fpk')
  const fromOnnx = await prepareElastic(join(modelDir, 'model.onnx'), onnxPkgPath)
  const p = await readElasticPackage(onnxPkgPath)
  t.same(p.config, pkg.config, 'config derived from the graph (heads from the query Reshape, eps, GELU form; labels from config.json beside it)')
  t.equal(fromOnnx.outlierFraction, report.outlierFraction)
  t.same([...p.blobs.keys()], [...pkg.blobs.keys()], 'the same blobs')
  const differing = [...pkg.blobs].filter(([name, b]) => p.blobs.get(name)!.crc32 !== b.crc32).map(([name]) => name)
  t.same(differing, [], 'with the same contents (CRC-32 of every resident tensor and shard version)')
  t.same(p.tokenizer, pkg.tokenizer)
  await t.rejects(prepareElastic(join(fixtures, 'models', 'resnet_small.onnx'), join(dir, 'x.fpk')), { code: 'ERR_FLEXPIPE_MODEL_FORMAT', message: /initializer 'embeddings\.word_embeddings\.weight' is missing/ }, 'an ONNX file without the encoder names is a typed error')
  await t.rejects(prepareElastic(join(fixtures, 'models', 'bert_tiny.onnx'), join(dir, 'y.fpk')), { code: 'ERR_FLEXPIPE_MODEL_FORMAT', message: /cannot find the number of attention heads/ }, 'an export whose heads cannot be found says to use the Hugging Face folder')
})

t.test('TextEncoder (tokenizer.json truncation rules) reproduces the Python ids', async (t) => {
  sample.ids.forEach((ids, i) => t.same(encoder.encode(dev[i]!.text).ids, ids, `dev text ${i}`))
})

t.test('the full model from fp32 shards matches onnxruntime-node on model.onnx', async (t) => {
  const x = await ElasticRunner.open(pkgPath, pkg.config, pkg.blobs, { threads: 2, io: 'auto' })
  t.teardown(() => x.dispose())
  const plan: RunPlan = { depth: L, width: M, seq: 128, bits: fill(32), preloaded: fill(false) }
  await x.apply(plan)
  const shortest = [...dev].sort((a, b) => a.text.length - b.text.length).slice(0, 2)
  for (const e of [...dev.slice(0, 4), ...shortest]) {
    const ids = encoder.encode(e.text).ids
    const { logits } = await x.run(ids, { direct: true })
    const ort = await runOrt(join(modelDir, 'model.onnx'), {
      input_ids: tensor('int64', [1, ids.length], BigInt64Array.from(ids, BigInt)),
      attention_mask: tensor('int64', [1, ids.length], new BigInt64Array(ids.length).fill(1n)),
    })
    const want = ort.logits!.data as Float32Array
    const scale = Math.max(...Array.from(want, Math.abs))
    const err = Math.max(...Array.from(logits, (v, i) => Math.abs(v - want[i]!)))
    t.ok(err <= 1e-4 * scale + 1e-5, `${ids.length} tokens: |flexpipe - ort| = ${err.toExponential(2)}`)
  }
})

t.test('open() of the elastic package without a target runs the full model: infer() and classify() match onnxruntime-node on model.onnx', async (t) => {
  const copy = join(dir, 'spam-no-extension')
  await copyFile(pkgPath, copy)
  const engine = await open(copy, { threads: 2 }) // no .fpk in the name: open() reads what the file is
  t.teardown(() => engine.close())
  if (engine.kind !== 'elastic') return void t.fail(`an elastic package opens as an elastic engine, not ${engine.kind}`)
  t.same([engine.plan.planner, engine.plan.depth, engine.plan.width, engine.plan.bitsHistogram[32]], ['full-model', L, M, L * M], 'the full model at fp32')
  t.equal(engine.targetLatencyMs, undefined)
  t.same(engine.inputs.map((i) => i.name), ['input_ids', 'attention_mask'], "model.onnx's inputs")
  for (const e of dev.slice(4, 8)) {
    const ids = encoder.encode(e.text).ids
    const feeds = {
      input_ids: tensor('int64', [1, ids.length], BigInt64Array.from(ids, BigInt)),
      attention_mask: tensor('int64', [1, ids.length], new BigInt64Array(ids.length).fill(1n)),
    }
    const { logits } = await engine.infer(feeds)
    const want = (await runOrt(join(modelDir, 'model.onnx'), feeds)).logits!.data as Float32Array
    const scale = Math.max(...Array.from(want, Math.abs))
    const err = Math.max(...Array.from(logits!.data as Float32Array, (v, i) => Math.abs(v - want[i]!)))
    t.ok(err <= 1e-4 * scale + 1e-5, `${ids.length} tokens: |infer - ort| = ${err.toExponential(2)}`)
    const [c] = await engine.classify(e.text)
    t.equal(c!.index, want[1]! > want[0]! ? 1 : 0, 'classify() agrees')
  }
  await t.rejects(engine.setTargetLatency(20), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /without targetLatencyMs/ }, 'no target to change')
  await t.rejects(engine.infer({ input_ids: tensor('int64', [1, 200], new BigInt64Array(200)), attention_mask: tensor('int64', [1, 200], new BigInt64Array(200).fill(1n)) }), { code: 'ERR_FLEXPIPE_INPUT', message: /1\.\.128 tokens/ }, 'more tokens than the plan holds')
  await t.rejects(open(pkgPath, { memoryBudget: 1e8 } as never), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', options: ['memoryBudget'], message: /is an elastic package/ }, 'a memory budget is named as not for this file')
})

t.test('6-bit and mixed-bitwidth sub-models still classify the dev emails', async (t) => {
  const x = await ElasticRunner.open(pkgPath, pkg.config, pkg.blobs, { threads: 2, io: 'auto' })
  t.teardown(() => x.dispose())
  const subset = dev.slice(0, 60)
  const acc = async (plan: RunPlan): Promise<number> => {
    await x.apply(plan)
    let right = 0
    for (const e of subset) {
      const { logits } = await x.run(encoder.encode(e.text).ids)
      if ((logits[1]! > logits[0]! ? 1 : 0) === e.label) right++
    }
    return right / subset.length
  }
  const full = await acc({ depth: L, width: M, seq: 128, bits: fill(32), preloaded: fill(true) })
  const six = await acc({ depth: L, width: M, seq: 128, bits: fill(6), preloaded: fill(true) })
  const small = await acc({ depth: 3, width: 4, seq: 128, bits: [[2, 3, 4, 5], [6, 6, 2, 2], [32, 4, 4, 3]], preloaded: [[true, false, true, false], [false, false, true, true], [true, true, true, false]] })
  t.ok(full >= 0.9, `full fp32: ${(full * 100).toFixed(1)}% on 60 dev emails`)
  t.ok(six >= full - 0.05, `all shards 6-bit: ${(six * 100).toFixed(1)}%`)
  t.ok(small >= 0.8, `3x4 mixed bitwidths: ${(small * 100).toFixed(1)}%`)
})

t.test('the demo (README main job) prepares, profiles and classifies under a target latency', async (t) => {
  const out = execFileSync(process.execPath, [join(repoRoot, 'dist', 'lib', 'cli', 'main.js'), 'demo', '--threads', '2'], { encoding: 'utf8', cwd: repoRoot })
  t.match(out, /target latency T = \d+ ms/)
  t.match(out, /flexpipe plan: \d layers x \d shards/)
  t.equal(out.split('\n').filter((l) => /^(ham|spam)\s+p=/.test(l)).length, 8, 'eight emails classified')
  t.match(out, /\d\/8 within 1\.05 x T/)
})
