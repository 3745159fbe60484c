// SPDX-License-Identifier: Apache-2.0
// `npm run bench:elastic-lengths`: deadlines that see the real length (issue 37, part 4). The spam
// encoder's elastic package (bench-package.ts: prepared and profiled as bench:elastic does, cold IO:
// O_DIRECT), with compute delays at 32, 64 and max_length tokens. For each target T (tight and medium:
// 0.55 and 0.8 x the full model's compute at max_length, or milliseconds) two engines, alternating:
//   buckets   as built: the plan of each input's length bucket (32, 64, max_length), run at that length;
//   padded    the same profile cut to max_length alone: every input padded and run on the one plan
//             (what the engine did before, and what an engine without per-length delays does).
// --rounds (3) rounds, each opening each engine afresh and running --runs (30) calls per length,
// lengths interleaved call by call (8, 24, 48 and max_length tokens: dev messages cut to that length).
// Per engine and length: the sub-model (depth x width shards), median and p95 latency over all rounds,
// the share of calls within 1.05 T. Prints a table; writes bench/results/elastic-lengths.json.
//
//   npm run bench:elastic-lengths [-- --targets tight,medium --runs 30 --rounds 3 --threads 2]
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { LatencyTargetError } from '../../lib/errors.js'
import { ElasticEngine } from '../../lib/runtime/elastic-engine.js'
import { computeFor, type ElasticDeviceProfile } from '../../lib/profile/elastic-device.js'
import { benchPackage } from './bench-package.js'
import { ioSettings } from './configs.js'
import { devInputs, fitIds, maxLengthOf } from './dev-inputs.js'
import { benchOptions, resolveTargets } from './options.js'
import { machine, median, numberOption, quantile, repoRoot } from '../models/cases.js'

const o = benchOptions()
const rounds = numberOption('rounds', 'FLEXPIPE_BENCH_ROUNDS', 3)
const runs = numberOption('runs', 'FLEXPIPE_BENCH_RUNS', 30)
const targetNames = o.targets.filter((t) => t !== 'loose')
const log = (line: string): void => console.log(line)

interface Cell {
  /** Calls per sub-model (the latency controller may move a bucket's plan during the run). */
  plans: Map<string, number>
  shards: number[]
  ms: number[]
}

const bp = await benchPackage(o.model, { threads: o.threads, io: ['cold'], devLimit: o.devLimit, seq: undefined, reprofile: o.reprofile }, log)
const c = bp.pkg.config
const seq = maxLengthOf(bp.pkg)
const device = bp.profiles.cold!
const top = computeFor(device, seq)!
const fullMs = top.fixedMs + c.layers * top.layerMs[c.heads]!
const padded: ElasticDeviceProfile = { ...device, compute: device.compute.filter((x) => x.seq >= seq) }
const lengths = [8, 24, 48, seq].filter((n) => n <= seq)
const dev = await devInputs(bp.pkg, bp.dev, seq, 400)
const inputs = new Map(lengths.map((n) => [n, dev.filter((e) => e.ids.length >= n).slice(0, 20).map((e) => fitIds(e.ids, n))]))
for (const [n, xs] of inputs) if (xs.length === 0) throw new Error(`no dev message has ${n} tokens`)
const io = ioSettings.cold
const m = machine()
log(`# elastic lengths: ${bp.path}; ${o.threads} threads, IO cold (O_DIRECT); profile buckets ${device.compute.map((x) => x.seq).join(', ')}; ${m.cpu as string}, ${m.cores as number} cores`)
log(`# F (full model compute at ${seq} tokens) = ${fullMs.toFixed(1)} ms; ${rounds} rounds x ${runs} calls per length, lengths interleaved`)

const results: Array<{ target: string; targetMs: number; engine: string; length: number; plan: string; plans: Record<string, number>; medianShards: number; medianMs: number; p95Ms: number; within: number }> = []
for (const target of resolveTargets(targetNames, fullMs)) {
  const cells = new Map<string, Cell>()
  for (let r = 0; r < rounds; r++) {
    for (const [name, profile] of (r % 2 === 0 ? [['buckets', device], ['padded', padded]] : [['padded', padded], ['buckets', device]]) as Array<[string, ElasticDeviceProfile]>) {
      let e: ElasticEngine
      try {
        e = await ElasticEngine.open(bp.path, { targetLatencyMs: target.ms, threads: o.threads, direct: io.direct, seq, deviceProfile: profile })
      } catch (err) {
        if (!(err instanceof LatencyTargetError)) throw err
        log(`T = ${target.ms.toFixed(2)} ms (${target.name}) is below what this machine meets (${err.minimumMs} ms): skipped`)
        continue
      }
      try {
        for (const n of lengths) await e.inferIds(inputs.get(n)![0]!) // warm: each length's program applied once
        for (let k = 0; k < runs; k++) {
          for (const n of lengths) {
            const ids = inputs.get(n)![k % inputs.get(n)!.length]!
            const p = e.planForLength(n) // the plan this call runs (a controller's switch takes effect at the next call)
            const { times } = await e.inferIds(ids)
            const key = `${name}/${n}`
            let cell = cells.get(key)
            if (cell === undefined) cells.set(key, (cell = { plans: new Map(), shards: [], ms: [] }))
            cell.plans.set(`${p.depth}x${p.width}`, (cell.plans.get(`${p.depth}x${p.width}`) ?? 0) + 1)
            cell.shards.push(p.depth * p.width)
            cell.ms.push(times.totalMs)
          }
        }
      } finally {
        await e.close()
      }
    }
  }
  if (!cells.has(`buckets/${seq}`) || !cells.has(`padded/${seq}`)) continue
  log(`\nT = ${target.ms.toFixed(1)} ms (${target.name})`)
  log('| length | buckets: sub-model (most calls) | shards, median | median ms | p95 ms | within 1.05 T | padded: sub-model | shards | median ms | p95 ms | within 1.05 T |')
  log('|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|')
  for (const n of lengths) {
    const row = ['buckets', 'padded'].map((name) => {
      const cell = cells.get(`${name}/${n}`)!
      const within = cell.ms.filter((x) => x <= 1.05 * target.ms).length / cell.ms.length
      const plan = [...cell.plans].sort((a, b) => b[1] - a[1])[0]![0]
      results.push({ target: target.name, targetMs: target.ms, engine: name, length: n, plan, plans: Object.fromEntries(cell.plans), medianShards: median(cell.shards), medianMs: median(cell.ms), p95Ms: quantile(cell.ms, 0.95), within })
      return `${plan} (${[...cell.plans.values()].reduce((a, b) => Math.max(a, b), 0)}/${cell.ms.length}) | ${median(cell.shards)} | ${median(cell.ms).toFixed(2)} | ${quantile(cell.ms, 0.95).toFixed(2)} | ${(100 * within).toFixed(0)}%`
    })
    log(`| ${n} | ${row.join(' | ')} |`)
  }
}
const out = join(repoRoot, 'bench', 'results', 'elastic-lengths.json')
writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), machine: m, threads: o.threads, io: 'cold (O_DIRECT)', package: bp.path, profileBuckets: device.compute.map((x) => x.seq), fullComputeMs: fullMs, rounds, runs, results }, null, 2)}\n`)
log(`\nwrote ${out}`)
