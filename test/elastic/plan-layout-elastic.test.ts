// SPDX-License-Identifier: Apache-2.0
// The memory layout of elastic plans (ExecutionPlan.buffers, lib/plan/elastic/elastic-buffers.ts) on a
// small random BERT classifier (test/helpers/tiny-encoder.ts), for the full model and for a sub-model
// chosen under a target latency: it is the layout the sub-model's program and load queue use, it holds
// exactly the shard versions the plan chose (preloaded ones in the preload buffer, the others staged
// during each inference), the picture draws it and states the plan, and the trace of a profiled run
// shows the embedding-row and shard loads.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { tensor } from '../../lib/index.js'
import { nativeInfo } from '../../lib/native/info.js'
import { readElasticPackage, shardBlobName } from '../../lib/package/elastic-manifest.js'
import { planSvg } from '../../lib/plan/draw/plan-svg.js'
import { profileKey, type ElasticDeviceProfile } from '../../lib/profile/elastic-device.js'
import { prepareElastic } from '../../lib/prepare/prepare-elastic.js'
import { ElasticEngine, type ElasticOpenOptions } from '../../lib/runtime/elastic-engine.js'
import { runTrace } from '../../lib/runtime/run-trace.js'
import { checkLayout, checkPicture, checkTrace } from '../helpers/plan-checks.js'
import { tinyShape, tinyVocab, writeTinyEncoder } from '../helpers/tiny-encoder.js'
import { findAll, parseXml } from '../helpers/xml.js'

const dir = await mkdtemp(join(tmpdir(), 'flexpipe-plan-elastic-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
await writeTinyEncoder(join(dir, 'tiny'))
const pkgPath = join(dir, 'tiny.fpk')
await prepareElastic(join(dir, 'tiny'), pkgPath)
const pkg = await readElasticPackage(pkgPath)
const seq = 16
const threads = 2
const ids = BigInt64Array.from({ length: seq }, (_, i) => BigInt((i * 7) % tinyVocab.length))
const feeds = { input_ids: tensor('int64', [1, seq], ids), attention_mask: tensor('int64', [1, seq], new BigInt64Array(seq).fill(1n)) }
/** Room for two fp32 shards in the preload buffer. */
const preloadBytes = 2 * pkg.blobs.get(shardBlobName(0, 0, 32))!.paddedLength

/** Opens the package, checks its plan's layout, picture and trace, and what the layout holds. */
async function checkElastic(t: Test, options: ElasticOpenOptions, what: string): Promise<ElasticEngine> {
  const engine = await ElasticEngine.open(pkgPath, { threads, direct: false, seq, preloadBytes, ...options })
  t.teardown(() => engine.close())
  const plan = await engine.executionPlan(feeds)
  checkLayout(t, plan, what)
  const svg = planSvg(plan, { model: pkgPath, kind: 'elastic', elastic: { plan: engine.plan, layers: tinyShape.layers, heads: tinyShape.heads } })
  checkPicture(t, svg, plan, what)
  const p = engine.plan
  const chosen = (preloaded: boolean): string[] =>
    p.shards.slice(0, p.depth).flatMap((row, l) => row.filter((s) => s.preloaded === preloaded).map((s) => shardBlobName(l, s.shard, s.bits))).sort()
  const named = (kind: string): string[] => plan.buffers.filter((b) => b.kind === kind).map((b) => b.name).sort()
  t.same(named('staged'), chosen(false), `${what}: a staged buffer per loaded shard version of the plan`)
  t.same(named('preloaded'), chosen(true), `${what}: a preload-buffer buffer per preloaded shard version`)
  t.equal(named('input-rows').length, 1, `${what}: the embedding rows, read for each inference`)
  const cells = findAll(parseXml(svg), (e) => e.attrs.id === 'bits')[0]!.children.map((e) => e.text)
  t.same(cells.slice(-p.depth * (p.width + 1)), p.shards.slice(0, p.depth).flatMap((row, l) => [`layer ${l}`, ...row.map((s) => `${s.bits === 32 ? 'fp32' : s.bits}${s.preloaded ? ' p' : ''}`)]), `${what}: the picture tables every shard version`)
  const { run } = await engine.inferTraced(feeds)
  t.equal(run.plan, plan, `${what}: the traced inference ran the plan drawn`)
  const loads = run.report.loads!
  t.ok(loads.after.length > (plan.loads?.after.length ?? 0), `${what}: the run read the embedding rows' pages before the plan's ${plan.loads?.after.length ?? 0} loads`)
  checkTrace(t, runTrace(run.plan, run.report, 'tiny.fpk'), plan, loads.after.length, what)
  return engine
}

t.test('the full model: every shard at fp32, two preloaded, the others staged during each inference', async (t) => {
  const e = await checkElastic(t, {}, 'full model')
  t.equal(e.plan.depth * e.plan.width, tinyShape.layers * tinyShape.heads)
})

t.test('a target latency: the sub-model and shard versions the planner chose', async (t) => {
  // A made-up device (layers of 1..4 shards take 2..5 ms, reads 10 µs per KB), so the plan is the same on any machine.
  const device: ElasticDeviceProfile = {
    key: profileKey(nativeInfo().isa, threads, false, undefined, pkg.digest),
    created: 'test',
    compute: [{ seq, layerMs: [0, 2, 3, 4, 5], fixedMs: 1, embeddingIoMs: 0.5 }],
    readMsPerByte: 1e-5,
    readMsPerJob: 0.1,
    readSamples: [],
    shardReadMs: {},
    calibration: { scale: 1, jitter: 1, runs: [] },
  }
  // Room for one 6-bit shard (the preload bitwidth): the other shards are staged.
  const oneShard = pkg.blobs.get(shardBlobName(0, 0, 6))!.paddedLength
  const e = await checkElastic(t, { targetLatencyMs: 9, deviceProfile: device, adaptive: false, openCalibrationRuns: 0, preloadBytes: oneShard }, 'target 9 ms')
  t.ok(e.plan.preload.length === 1 && e.plan.loadBytes > 0, 'one shard preloaded, the others read during each inference')
  t.ok(e.plan.depth * e.plan.width < tinyShape.layers * tinyShape.heads, `a sub-model of ${e.plan.depth} x ${e.plan.width}`)
  t.ok(e.plan.shards.flat().some((s) => s.bits < 32), 'with quantized shards')
})
