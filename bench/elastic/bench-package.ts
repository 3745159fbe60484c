// SPDX-License-Identifier: Apache-2.0
// The benchmark's elastic package in .cache/bench-elastic/: prepared once from the model folder, with
// shard importance from the dev set and one device profile per IO mode (threads, O_DIRECT, throttle),
// each added only when missing or stale (or with --reprofile), so later runs reuse everything. The
// package is stale when it is older than the model's files or was prepared by another build of the
// library (buildId, recorded beside it in <package>.build).
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { findDeviceProfile, profileKey, type ElasticDeviceProfile } from '../../lib/profile/elastic-device.js'
import { nativeInfo } from '../../lib/native/info.js'
import { readElasticPackage, type ElasticPackage } from '../../lib/package/elastic-manifest.js'
import { prepareElastic } from '../../lib/prepare/prepare-elastic.js'
import { profileElastic } from '../../lib/prepare/profile-elastic.js'
import { buildId } from '../build-id.js'
import { repoRoot } from '../models/cases.js'
import { ioSettings, type IoMode } from './configs.js'
import { maxLengthOf } from './dev-inputs.js'

export const cacheDir = join(repoRoot, '.cache', 'bench-elastic')

export interface BenchPackage {
  readonly path: string
  readonly dev: string
  readonly pkg: ElasticPackage
  readonly profiles: Readonly<Partial<Record<IoMode, ElasticDeviceProfile>>>
  /** What this run had to do (empty: everything reused). */
  readonly work: readonly string[]
}

export interface PackageOptions {
  readonly threads: number
  readonly io: readonly IoMode[]
  readonly devLimit: number | undefined
  readonly seq: number | undefined
  readonly reprofile: boolean
}

const newer = (file: string, than: readonly string[]): boolean => existsSync(file) && than.every((f) => statSync(file).mtimeMs > statSync(f).mtimeMs)

function devCount(dev: string, limit: number | undefined): number {
  const n = readFileSync(dev, 'utf8').split('\n').filter((l) => l.trim() !== '').length
  return Math.min(n, limit ?? Infinity)
}

function storedProfile(pkg: ElasticPackage, path: string, threads: number, io: IoMode): ElasticDeviceProfile | undefined {
  const s = ioSettings[io]
  try {
    return findDeviceProfile(pkg.meta.deviceProfiles, profileKey(nativeInfo().isa, threads, s.direct, s.bandwidth, pkg.digest), path)
  } catch {
    return undefined
  }
}

/** Prepares and profiles as needed; `log` gets one line per step and progress every 20 s. */
export async function benchPackage(modelDir: string, o: PackageOptions, log: (line: string) => void): Promise<BenchPackage> {
  const dev = join(modelDir, 'dev.jsonl')
  const inputs = ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => join(modelDir, f))
  for (const f of [...inputs, dev]) if (!existsSync(f)) throw new Error(`${f} not found`)
  mkdirSync(cacheDir, { recursive: true })
  const path = join(cacheDir, `${basename(modelDir)}.fpk`)
  const work: string[] = []
  const built = `${path}.build`
  if (!newer(path, inputs) || !existsSync(built) || readFileSync(built, 'utf8').trim() !== buildId()) {
    const r = await prepareElastic(modelDir, path)
    writeFileSync(built, `${buildId()}\n`)
    work.push(`prepared ${relative(repoRoot, path)}: ${r.packageBytes} bytes, bitwidths ${r.bitwidths.join(',')}, outliers ${(100 * r.outlierFraction).toFixed(3)}%, ${(r.ms / 1000).toFixed(1)} s`)
    log(work[work.length - 1]!)
  }
  const wantDev = devCount(dev, o.devLimit)
  const modes: IoMode[] = [...new Set<IoMode>(['cold', ...o.io])]
  let last = performance.now()
  const onProgress = (done: number, total: number, what: string): void => {
    if (performance.now() - last < 20_000) return
    last = performance.now()
    log(`    ${done}/${total}: ${what}`)
  }
  for (const io of modes) {
    const pkg = await readElasticPackage(path)
    const imp = pkg.meta.importance as { devCount?: number } | undefined
    const needImportance = imp?.devCount !== wantDev
    if (!needImportance && !o.reprofile && storedProfile(pkg, path, o.threads, io) !== undefined) continue
    const s = ioSettings[io]
    const t0 = performance.now()
    log(`  profiling ${io} IO (${o.threads} threads)${needImportance ? ` and shard importance on ${wantDev} dev examples` : ''} ...`)
    const maxLength = maxLengthOf(pkg)
    const seqs = [...new Set([32, 64, o.seq ?? maxLength, maxLength])]
    const r = await profileElastic(path, {
      threads: o.threads,
      direct: s.direct,
      ...(s.bandwidth ? { bandwidth: s.bandwidth } : {}),
      seqs,
      ...(needImportance ? { dev, ...(o.devLimit ? { devLimit: o.devLimit } : {}) } : {}),
      onProgress,
    })
    const i = r.importance
    const what = i ? ` and importance (dev accuracy: full model ${(100 * i.fullAccuracy).toFixed(2)}%, every shard at the lowest bitwidth ${(100 * i.lowAccuracy).toFixed(2)}%)` : ''
    work.push(`profiled ${io} IO${what} in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    log(`  ${work[work.length - 1]!}`)
  }
  const pkg = await readElasticPackage(path)
  const profiles: Partial<Record<IoMode, ElasticDeviceProfile>> = {}
  for (const io of modes) profiles[io] = findDeviceProfile(pkg.meta.deviceProfiles, profileKey(nativeInfo().isa, o.threads, true, ioSettings[io].bandwidth, pkg.digest), path)
  return { path, dev, pkg, profiles, work }
}
