// SPDX-License-Identifier: Apache-2.0
// The server example (examples/server) under load, on flexpipe and on onnxruntime-node: the same server
// code, one process per engine (never both engines in one process), driven by autocannon on loopback.
//
//   npm run bench:server [-- --seconds 10 --rounds 3 --connections 1,8,64 --threads 2
//                           --rss-requests 10000 --flood-seconds 60 --flood-queue 16]
//
// Three parts, each engine in a fresh server process, the engines alternating:
//   throughput  1, 8 and 64 connections; each cell: 2 s warm-up, then --seconds measured; queue 64, so
//               every request is served (64 connections: one running, up to 63 waiting). Median over
//               --rounds of requests/s (2xx / duration), p50 and p99 latency.
//   rss         --rss-requests at 8 connections and --rss-rate requests/s (default 40, below what every
//               series sustains: the garbage a Node server holds grows with its request rate, so
//               every series runs at the same one), in blocks of 500, the server's VmRSS after each:
//               flexpipe on the ONNX model, flexpipe on a package within a 16 MB budget, onnxruntime,
//               and the server alone: flexpipe on a model that only averages its input and maps the
//               three means to 1000 logits (same request and response sizes, almost no engine memory),
//               so that a series minus this one is what its engine holds.
//   flood       64 connections for --flood-seconds on a queue of --flood-queue: only 200s and 429s, the
//               queue's observed maximum within its bound, the server alive and draining to exit 0.
// The model is MobileNetV2 1x3x224x224 (scripts/bench/export_models.py), sent raw (602 KB per request).
// autocannon runs in this process and shares the machine's cores with the server: stated in the output.
// Writes bench/results/server-load.json and bench/results/server-rss.svg.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'
import { prepare } from '../../lib/index.js'
import { parseMetrics } from '../../examples/server/metrics.js'
import { makeModel } from '../../test/helpers/make-model.js'
import { rssChart, type RssSeries } from './rss-chart.js'
import { allCases, ensureModels, machine, median, numberOption, option, repoRoot, resultsDir, versions } from '../models/cases.js'

const seconds = numberOption('seconds', 'FLEXPIPE_BENCH_SECONDS', 10)
const rounds = Math.round(numberOption('rounds', 'FLEXPIPE_BENCH_ROUNDS', 3, true))
const connectionsList = (option('connections', 'FLEXPIPE_BENCH_CONNECTIONS') ?? '1,8,64').split(',').map(Number)
const threads = Math.round(numberOption('threads', 'FLEXPIPE_BENCH_THREADS', availableParallelism()))
const rssRequests = Math.round(numberOption('rss-requests', 'FLEXPIPE_BENCH_RSS_REQUESTS', 10000, true))
const rssRate = numberOption('rss-rate', 'FLEXPIPE_BENCH_RSS_RATE', 40)
const floodSeconds = numberOption('flood-seconds', 'FLEXPIPE_BENCH_FLOOD_SECONDS', 60, true)
const floodQueue = Math.round(numberOption('flood-queue', 'FLEXPIPE_BENCH_FLOOD_QUEUE', 16))
const budgetBytes = 16e6
const serverJs = join(repoRoot, 'dist', 'examples', 'server', 'server.js')
const engines = ['flexpipe', 'onnxruntime'] as const
type EngineName = (typeof engines)[number]

interface Server {
  readonly child: ChildProcess
  readonly url: string
  readonly exited: Promise<number | null>
}

async function startServer(engine: EngineName, model: string, extra: string[] = []): Promise<Server> {
  const child = spawn(process.execPath, [serverJs, '--engine', engine, '--model', `m=${model}`, '--port', '0', '--threads', String(threads), ...extra], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const lines = createInterface({ input: child.stdout! })
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { listening: string }).listening))
    child.once('exit', (code) => reject(new Error(`${engine} server exited with ${code} before listening`)))
  })
  return { child, url, exited }
}

async function stopServer(s: Server): Promise<number | null> {
  s.child.kill('SIGTERM')
  return s.exited
}

async function metrics(url: string): Promise<Map<string, number>> {
  return parseMetrics(await (await fetch(`${url}/metrics`)).text())
}

function load(url: string, body: Buffer, opts: { connections: number; duration?: number; amount?: number; rate?: number }): Promise<autocannon.Result> {
  return autocannon({
    url: `${url}/v1/models/m/infer`,
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', 'x-dims': '1,3,224,224' },
    body,
    connections: opts.connections,
    ...(opts.amount === undefined ? { duration: opts.duration ?? 10 } : { amount: opts.amount }),
    ...(opts.rate === undefined ? {} : { overallRate: opts.rate }),
    timeout: 30,
  })
}

function statusCounts(r: autocannon.Result): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [code, v] of Object.entries((r as unknown as { statusCodeStats: Record<string, { count: number | string }> }).statusCodeStats ?? {})) out[code] = Number(v.count)
  return out
}

async function main(): Promise<void> {
  if (process.argv.includes('--replot')) {
    // the plot again from the last run's file (after a change to the chart alone)
    const last = JSON.parse(readFileSync(join(resultsDir, 'server-load.json'), 'utf8')) as { rss: RssSeries[]; rssRate: number }
    writeFileSync(join(resultsDir, 'server-rss.svg'), rssChart(last.rss, last.rssRate))
    return
  }
  const mnv2 = allCases.find((c) => c.name === 'mobilenetv2')!
  const failed = ensureModels([mnv2], console.log)
  if (failed.size > 0) throw new Error(`${[...failed.values()].join('; ')}`)
  const body = Buffer.from(((await mnv2.feeds()).input!.data as Float32Array).buffer)
  const cacheDir = join(repoRoot, '.cache', 'server-bench')
  mkdirSync(cacheDir, { recursive: true })
  const pkg = join(cacheDir, 'mobilenetv2.fpk')
  if (!existsSync(pkg)) await prepare(mnv2.path, pkg, { budget: budgetBytes, dims: { batch: 1 }, threads })
  const serverAlone = join(cacheDir, 'average-to-logits.onnx')
  writeFileSync(
    serverAlone,
    makeModel({
      inputs: [{ name: 'input', dtype: 'float32', dims: ['batch', 3, 224, 224] }],
      outputs: [{ name: 'logits', dtype: 'float32', dims: ['batch', 1000] }],
      initializers: [{ name: 'w', dims: [3, 1000], floats: Array.from({ length: 3000 }, (_, i) => ((i % 7) - 3) / 3) }],
      nodes: [
        { op: 'GlobalAveragePool', inputs: ['input'], outputs: ['mean'] },
        { op: 'Flatten', inputs: ['mean'], outputs: ['flat'] },
        { op: 'MatMul', inputs: ['flat', 'w'], outputs: ['logits'] },
      ],
    }),
  )

  const setting = `threads ${threads} per server; autocannon in the benchmark's process on the same ${availableParallelism()} cores; loopback; ${(body.byteLength / 1e3).toFixed(0)} KB raw float32 per request`
  console.log(`# server load: MobileNetV2 1x3x224x224; ${setting}`)
  console.log(`# machine: ${JSON.stringify(machine())}`)

  // throughput
  const cells: { engine: EngineName; round: number; connections: number; rps: number; p50: number; p99: number; statuses: Record<string, number>; errors: number }[] = []
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? engines : [...engines].reverse()
    for (const engine of order) {
      const s = await startServer(engine, mnv2.path, ['--queue', '64', '--timeout-ms', '30000'])
      for (const connections of connectionsList) {
        await load(s.url, body, { connections, duration: 2 })
        const r = await load(s.url, body, { connections, duration: seconds })
        const statuses = statusCounts(r)
        const cell = { engine, round, connections, rps: (statuses['200'] ?? 0) / r.duration, p50: r.latency.p50, p99: r.latency.p99, statuses, errors: r.errors }
        cells.push(cell)
        console.log(`round ${round + 1} ${engine.padEnd(11)} ${String(connections).padStart(3)} conn: ${cell.rps.toFixed(1).padStart(6)} req/s  p50 ${String(cell.p50).padStart(5)} ms  p99 ${String(cell.p99).padStart(5)} ms  ${JSON.stringify(statuses)} errors ${r.errors}`)
      }
      await stopServer(s)
    }
  }
  const table = connectionsList.map((connections) => {
    const pick = (engine: EngineName) => cells.filter((c) => c.engine === engine && c.connections === connections)
    const f = pick('flexpipe')
    const o = pick('onnxruntime')
    const med = (xs: typeof f, k: 'rps' | 'p50' | 'p99') => median(xs.map((c) => c[k]))
    return {
      connections,
      flexpipe: { rps: med(f, 'rps'), p50: med(f, 'p50'), p99: med(f, 'p99') },
      onnxruntime: { rps: med(o, 'rps'), p50: med(o, 'p50'), p99: med(o, 'p99') },
      rpsRatio: med(f, 'rps') / med(o, 'rps'),
      non200: [...f, ...o].reduce((n, c) => n + Object.entries(c.statuses).reduce((m, [code, k]) => m + (code === '200' ? 0 : k), 0) + c.errors, 0),
    }
  })
  if (rounds > 0) console.log(`\n| connections | flexpipe req/s | p50 ms | p99 ms | onnxruntime req/s | p50 ms | p99 ms | req/s ratio |`)
  if (rounds > 0) console.log(`|---|---|---|---|---|---|---|---|`)
  for (const r of rounds > 0 ? table : []) {
    console.log(`| ${r.connections} | ${r.flexpipe.rps.toFixed(1)} | ${r.flexpipe.p50} | ${r.flexpipe.p99} | ${r.onnxruntime.rps.toFixed(1)} | ${r.onnxruntime.p50} | ${r.onnxruntime.p99} | ${r.rpsRatio.toFixed(2)} |`)
  }

  // RSS over requests
  const rss: {
    label: string
    short: string
    engine: EngineName
    budgetBytes?: number
    rssBeforeModels: number
    points: { requests: number; rss: number; hwm: number; heapTotal: number; external: number }[]
    arenaBytes?: number
  }[] = []
  if (rssRequests > 0) {
    for (const [label, short, engine, model, extra, budget] of [
      ['the server alone (a model that only averages its input)', 'server alone', 'flexpipe', serverAlone, [], undefined],
      ['flexpipe, ONNX model', 'flexpipe, ONNX', 'flexpipe', mnv2.path, [], undefined],
      [`flexpipe, package within ${budgetBytes / 1e6} MB`, `flexpipe, ${budgetBytes / 1e6} MB budget`, 'flexpipe', pkg, ['--budget', String(budgetBytes)], budgetBytes],
      ['onnxruntime', 'onnxruntime', 'onnxruntime', mnv2.path, [], undefined],
    ] as const) {
      const s = await startServer(engine, model, [...extra, '--queue', '64', '--timeout-ms', '30000'])
      const before = (await metrics(s.url)).get('flexpipe_rss_before_models_bytes')!
      const sample = async (requests: number) => {
        const m = await metrics(s.url)
        // the server's own VmRSS and VmHWM (examples/server/metrics.ts reads /proc/self/status)
        return {
          requests,
          rss: m.get('process_resident_memory_bytes')!,
          hwm: m.get('process_resident_memory_peak_bytes')!,
          heapTotal: m.get('nodejs_heap_size_total_bytes')!,
          external: m.get('nodejs_external_memory_bytes')!,
        }
      }
      const points = [await sample(0)]
      for (let done = 0; done < rssRequests; ) {
        const n = Math.min(500, rssRequests - done)
        const r = await load(s.url, body, { connections: 8, amount: n, rate: rssRate })
        done += statusCounts(r)['200'] ?? 0
        if ((statusCounts(r)['200'] ?? 0) === 0) throw new Error(`${label}: no request served`)
        points.push(await sample(done))
      }
      const m = await metrics(s.url)
      const arena = m.get('flexpipe_arena_bytes{model="m",engine="flexpipe"}')
      rss.push({ label, short, engine, ...(budget === undefined ? {} : { budgetBytes: budget }), rssBeforeModels: before, points, ...(arena === undefined ? {} : { arenaBytes: arena }) })
      const first = points[1]!.rss
      const last = points.at(-1)!.rss
      const end = points.at(-1)!
      console.log(`rss ${label}: before models ${(before / 1e6).toFixed(1)} MB; after 500 requests ${(first / 1e6).toFixed(1)} MB; after ${end.requests} ${(last / 1e6).toFixed(1)} MB (${(((last - first) / first) * 100).toFixed(1)} %); peak ${(end.hwm / 1e6).toFixed(1)} MB; V8 heap ${(end.heapTotal / 1e6).toFixed(1)} MB, external ${(end.external / 1e6).toFixed(1)} MB${budget === undefined ? '' : `; peak - before models ${((points.at(-1)!.hwm - before) / 1e6).toFixed(1)} MB vs budget ${(budget / 1e6).toFixed(1)} MB`}`)
      await stopServer(s)
    }
    const alone = rss[0]!
    const above = (r: (typeof rss)[number], i: number) => (r.points[i]!.rss - r.rssBeforeModels) / 1e6
    // what each engine holds: its series minus the server alone, block by block (same requests served)
    for (const r of rss.slice(1)) {
      const held = r.points.slice(1).map((_, k) => above(r, k + 1) - above(alone, k + 1))
      console.log(`held by the engine, ${r.label}: median ${median(held).toFixed(1)} MB, max ${Math.max(...held).toFixed(1)} MB over blocks 500..${r.points.at(-1)!.requests}${r.budgetBytes === undefined ? '' : ` (budget ${(r.budgetBytes / 1e6).toFixed(1)} MB)`}`)
    }
    writeFileSync(join(resultsDir, 'server-rss.svg'), rssChart(rss, rssRate))
  }

  // flood
  const flood: { engine: EngineName; statuses: Record<string, number>; errors: number; timeouts: number; queueDepthMax: number; queueLimit: number; healthAfter: number; exitCode: number | null }[] = []
  if (floodSeconds > 0) {
    for (const engine of engines) {
      const s = await startServer(engine, mnv2.path, ['--queue', String(floodQueue)])
      const r = await load(s.url, body, { connections: 64, duration: floodSeconds })
      const m = await metrics(s.url)
      const l = `model="m",engine="${engine}"`
      const healthAfter = (await fetch(`${s.url}/healthz`)).status
      const exitCode = await stopServer(s)
      const row = { engine, statuses: statusCounts(r), errors: r.errors, timeouts: r.timeouts, queueDepthMax: m.get(`flexpipe_queue_depth_max{${l}}`)!, queueLimit: floodQueue, healthAfter, exitCode }
      flood.push(row)
      console.log(`flood ${engine}: 64 connections ${floodSeconds} s, queue ${floodQueue}: ${JSON.stringify(row.statuses)} errors ${row.errors} timeouts ${row.timeouts}; queue max ${row.queueDepthMax}; health after ${healthAfter}; exit ${exitCode}`)
    }
  }

  const out = { when: new Date().toISOString(), machine: machine(), versions: versions(), setting, model: 'MobileNetV2 1x3x224x224 (raw float32 body)', threads, seconds, rounds, cells, table, rssRate, rss, flood }
  writeFileSync(join(resultsDir, 'server-load.json'), JSON.stringify(out, null, 1) + '\n')
  console.log(`wrote bench/results/server-load.json${rssRequests > 0 ? ' and bench/results/server-rss.svg' : ''}`)
}

await main()
