// SPDX-License-Identifier: Apache-2.0
// The model zoo of bench:zoo: the torchvision networks scripts/bench/export_zoo.py exports into
// .cache/zoo-models/ (its manifest.json names each model's benchmark shapes), plus the transformers
// scripts/bench/export_models.py exports for bench:models. One case = one (model, input shape).
import { existsSync, readFileSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { benchModelDir, option, repoRoot } from '../models/cases.js'
import type { InputSpec } from './zoo-child.js'

export const zooModelDir = join(repoRoot, '.cache', 'zoo-models')
export const zooExportCommand = '/usr/bin/python3 scripts/bench/export_zoo.py'

export interface ZooCase {
  /** model@shape, e.g. resnet50@1x3x224x224. */
  readonly key: string
  readonly model: string
  readonly family: string
  readonly path: string
  readonly inputs: readonly InputSpec[]
  /** The model's native shape at batch 1 (its cold start and profile are measured there). */
  readonly native: boolean
}

interface ManifestModel {
  readonly family?: string
  readonly task?: string
  /** A path from the repository root (or absolute). */
  readonly file?: string
  readonly native?: number[]
  readonly shapes?: number[][]
}

const shapeKey = (dims: readonly number[]): string => dims.join('x')

/** A seed per case, so both engines' processes build the same input and cases differ. */
function seedOf(key: string): number {
  let h = 2166136261
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619)
  return h >>> 0
}

function readManifest(dir: string): Record<string, ManifestModel> {
  const p = join(dir, 'manifest.json')
  if (!existsSync(p)) return {}
  const m = JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>
  const models = (m.models ?? m) as Record<string, ManifestModel>
  return Object.fromEntries(Object.entries(models).filter(([, v]) => typeof v === 'object' && v !== null && Array.isArray(v.shapes)))
}

/** The models export_zoo.py could not export, with its reason. */
export function skippedModels(): Record<string, string> {
  const p = join(zooModelDir, 'manifest.json')
  if (!existsSync(p)) return {}
  const m = JSON.parse(readFileSync(p, 'utf8')) as { skipped?: Record<string, string | { reason?: string }> }
  return Object.fromEntries(Object.entries(m.skipped ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : String(v.reason ?? v)]))
}

function imageCases(): ZooCase[] {
  const cases: ZooCase[] = []
  for (const [model, entry] of Object.entries(readManifest(zooModelDir))) {
    const path = entry.file === undefined ? join(zooModelDir, `${model}.onnx`) : isAbsolute(entry.file) ? entry.file : join(repoRoot, entry.file)
    for (const dims of entry.shapes!) {
      const key = `${model}@${shapeKey(dims)}`
      const native = entry.native !== undefined && shapeKey(dims) === shapeKey(entry.native)
      cases.push({ key, model, family: entry.family ?? model, path, native, inputs: [{ name: 'input', dims, fill: 'uniform', seed: seedOf(key) }] })
    }
  }
  return cases
}

/** BERT-base at 1x128 and GPT-2 small at its exported length (128), as bench:models exports them (random seeded weights). */
function transformerCases(): ZooCase[] {
  const cases: ZooCase[] = []
  const bert = join(benchModelDir, 'bert_base.onnx')
  if (existsSync(bert)) {
    const key = 'bert_base@1x128'
    cases.push({ key, model: 'bert_base', family: 'bert', path: bert, native: true, inputs: [
      { name: 'input_ids', dims: [1, 128], fill: { tokens: 30522 }, seed: seedOf(key) },
      { name: 'attention_mask', dims: [1, 128], fill: 'ones', seed: 0 },
    ] })
  }
  const gpt2 = join(benchModelDir, 'gpt2.onnx')
  if (existsSync(gpt2)) {
    const seq = gpt2Seq()
    const key = `gpt2@1x${seq}`
    cases.push({ key, model: 'gpt2', family: 'gpt2', path: gpt2, native: true, inputs: [{ name: 'input_ids', dims: [1, seq], fill: { tokens: 50257 }, seed: seedOf(key) }] })
  }
  return cases
}

/** GPT-2 is exported with a fixed sequence length: bench:models' manifest records input_ids' dims. */
function gpt2Seq(): number {
  const p = join(benchModelDir, 'manifest.json')
  const m = existsSync(p) ? (JSON.parse(readFileSync(p, 'utf8')) as Record<string, { inputs?: Record<string, unknown[]> }>) : {}
  const d = m.gpt2?.inputs?.input_ids?.[1]
  return typeof d === 'number' ? d : 128
}

/**
 * The cases of this run: `--models a,b` (model names), `--shapes native|all` (default all) and
 * `--families` filter the zoo; transformers are included unless `--no-transformers`.
 */
export function zooCases(): ZooCase[] {
  let cases = [...imageCases(), ...(process.argv.includes('--no-transformers') ? [] : transformerCases())]
  const models = option('models', 'FLEXPIPE_ZOO_MODELS')?.split(',').map((s) => s.trim()).filter(Boolean)
  if (models !== undefined) {
    const known = new Set(cases.map((c) => c.model))
    const unknown = models.filter((m) => !known.has(m))
    if (unknown.length > 0) throw new Error(`--models: unknown ${unknown.join(', ')}; known: ${[...known].join(', ')} (export with ${zooExportCommand})`)
    cases = cases.filter((c) => models.includes(c.model))
  }
  const shapes = option('shapes', 'FLEXPIPE_ZOO_SHAPES') ?? 'all'
  if (shapes !== 'all' && shapes !== 'native') throw new Error(`--shapes: expected native or all, got ${shapes}`)
  if (shapes === 'native') cases = cases.filter((c) => c.native)
  return cases
}
