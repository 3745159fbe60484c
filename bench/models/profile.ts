// SPDX-License-Identifier: Apache-2.0
// Per-operator time of the benchmark models, to explain where flexpipe loses to onnxruntime-node:
//
//   npm run build:ts && node dist/bench/models/profile.js [--models resnet50,...] [--threads 1,2] [--runs 3] [--top 10] [--gap 100]
//
// flexpipe: Engine.inferProfiled() (wall time of each native op). onnxruntime-node: its own profiler
// (enableProfiling; "Node" kernel_time events), same session options as models.bench.ts. Both engines
// in one process, runs alternating, each timed run after a --gap pause and one untimed run of its
// engine; each node's median over --runs profiled runs, summed by operator type.
// onnxruntime's types are after its graph fusions (FusedConv, Attention, SkipLayerNormalization...).
// Prints the top operators per model and writes bench/results/models-profile.json.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import * as ort from 'onnxruntime-node'
import { open, type Tensor } from '../../lib/index.js'
import { loadOnnx } from '../../lib/model/onnx-import.js'
import { ensureModels, machine, median, numberOption, ortFeeds, ortOptions, repoRoot, resultsDir, round, selectedCases, selectedThreads, versions, type ModelCase } from './cases.js'
import { aggregate, chainOutputs, ortTimedRuns, pairConvNodes, profiledInfer, type OpTime, type OpTypeRow, type OrtTraceEvent, type ProfileResult } from './op-profile.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

async function profileBoth(c: ModelCase, threads: number, feeds: Record<string, Tensor>, runs: number, gapMs: number): Promise<Pick<ProfileResult, 'flexpipe' | 'ort'>> {
  const dir = mkdtempSync(join(tmpdir(), 'flexpipe-ort-profile-'))
  const engine = await open(c.path, { threads })
  try {
    const profiled = profiledInfer(engine)
    if (profiled === undefined) throw new Error('this flexpipe has no Engine.inferProfiled() (per-op timing); rebuild with a tree that has it')
    const session = await ort.InferenceSession.create(c.path, { ...ortOptions(threads), enableProfiling: true, profileFilePrefix: join(dir, 'ort') })
    const oFeeds = ortFeeds(feeds)
    const all: OpTime[][] = []
    const wall: number[] = []
    try {
      await engine.infer(feeds) // warm-up: plans
      await session.run(oFeeds)
      for (let i = 0; i < runs; i++) {
        // Before each engine's timed run: a pause (onnxruntime's workers spin for tens of ms after a
        // run, on the CPU the other engine would use) and one untimed run of that engine, as in
        // models.bench.ts's blocks. onnxruntime profiles every run: its trace keeps the second of
        // each pair.
        await sleep(gapMs)
        await engine.infer(feeds)
        const t0 = performance.now()
        const { ops } = await profiled(feeds)
        wall.push(performance.now() - t0)
        if (ops.length === 0) throw new Error('inferProfiled() returned no op timings (is the native addon older than lib/?)')
        all.push(ops)
        await sleep(gapMs)
        await session.run(oFeeds)
        await session.run(oFeeds)
      }
      session.endProfiling()
    } finally {
      await session.release()
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.json'))
    if (file === undefined) throw new Error('onnxruntime wrote no profile')
    const o = ortTimedRuns(JSON.parse(readFileSync(join(dir, file), 'utf8')) as OrtTraceEvent[], runs, 2)
    return {
      flexpipe: { wall_ms: round(median(wall)), ...aggregate(all) },
      ort: { wall_ms: round(median(o.wall)), ...aggregate(o.ops) },
    }
  } finally {
    await engine.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function profileCase(c: ModelCase, threads: number, runs: number, gapMs = 100): Promise<ProfileResult> {
  const feeds = await c.feeds()
  const errors: string[] = []
  const attempt = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn()
    } catch (err) {
      errors.push(`${what}: ${err instanceof Error ? err.message : String(err)}`)
      return undefined
    }
  }
  const both = await attempt('profile', () => profileBoth(c, threads, feeds, runs, gapMs))
  return { model: c.name, threads, runs, flexpipe: both?.flexpipe, ort: both?.ort, errors }
}

/** chains: chainOutputs of the model, to pair convolutions by the value their fused chain ends in. */
export function formatProfile(p: ProfileResult, top: number, chains?: ReadonlyMap<string, string>): string[] {
  const lines = [`${p.model}, ${p.threads} thread${p.threads === 1 ? '' : 's'} (median of ${p.runs} profiled runs per node):`]
  const f = p.flexpipe?.byOpType ?? []
  const o = p.ort?.byOpType ?? []
  const fw = p.flexpipe ? `flexpipe: ${p.flexpipe.ops_ms.toFixed(1)} ms in ops (run ${p.flexpipe.wall_ms.toFixed(1)} ms)` : 'flexpipe: -'
  const ow = p.ort ? `onnxruntime: ${p.ort.ops_ms.toFixed(1)} ms in ops (run ${p.ort.wall_ms.toFixed(1)} ms)` : 'onnxruntime: -'
  lines.push(`  ${fw.padEnd(76)}  ${ow}`)
  const cell = (r: OpTypeRow | undefined, kernels: boolean) => {
    if (r === undefined) return ''
    const k = kernels && r.kernels ? ` [${Object.keys(r.kernels).slice(0, 2).join(', ')}]` : ''
    return `${r.opType.padEnd(20)} ${r.ms.toFixed(1).padStart(9)} ms ${(r.share * 100).toFixed(1).padStart(5)}% x${String(r.count).padEnd(4)}${k}`
  }
  for (let i = 0; i < Math.min(top, Math.max(f.length, o.length)); i++) lines.push(`  ${String(i + 1).padStart(2)}. ${cell(f[i], true).padEnd(72)}  ${cell(o[i], false)}`)
  if (p.flexpipe !== undefined) {
    lines.push('  slowest flexpipe nodes:')
    for (const n of p.flexpipe.topNodes.slice(0, 5)) lines.push(`      ${n.ms.toFixed(1).padStart(9)} ms  ${n.opType.padEnd(12)} ${n.node}`)
  }
  if (p.flexpipe !== undefined && p.ort !== undefined) {
    const pairs = pairConvNodes(p.flexpipe.nodes, p.ort.nodes, chains).sort((a, b) => b.flexpipe_ms - b.ort_ms - (a.flexpipe_ms - a.ort_ms))
    if (pairs.length > 0) {
      lines.push('  largest flexpipe excess, convolution/Gemm nodes paired by name or output, else in execution order (flexpipe ms / onnxruntime ms):')
      for (const n of pairs.slice(0, 5)) lines.push(`      ${n.flexpipe_ms.toFixed(3).padStart(9)} / ${n.ort_ms.toFixed(3).padStart(7)}  ${n.node}`)
    }
  }
  for (const e of p.errors) lines.push(`  error: ${e}`)
  return lines
}

async function main(): Promise<void> {
  const runs = Math.round(numberOption('runs', 'FLEXPIPE_BENCH_PROFILE_RUNS', 3))
  const top = Math.round(numberOption('top', 'FLEXPIPE_BENCH_TOP', 10))
  const gapMs = numberOption('gap', 'FLEXPIPE_BENCH_GAP_MS', 100)
  const cases = selectedCases()
  const threadList = selectedThreads()
  const unavailable = ensureModels(cases, (s) => console.log(s))
  const results: ProfileResult[] = []
  for (const c of cases) {
    if (unavailable.has(c.name)) {
      console.log(`${c.name}: ${unavailable.get(c.name)}`)
      continue
    }
    const chains = chainOutputs(await loadOnnx(c.path))
    for (const threads of threadList) {
      const p = await profileCase(c, threads, runs, gapMs)
      results.push(p)
      for (const line of formatProfile(p, top, chains)) console.log(line)
      console.log('')
    }
  }
  mkdirSync(resultsDir, { recursive: true })
  const out = join(resultsDir, 'models-profile.json')
  writeFileSync(out, `${JSON.stringify({ benchmark: 'models-profile', date: new Date().toISOString(), machine: machine(), ...versions(), runs, profiles: results }, null, 2)}\n`)
  console.log(`wrote ${relative(repoRoot, out)}`)
  if (results.some((r) => r.errors.length > 0)) process.exitCode = 1
}

await main()
