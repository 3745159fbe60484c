// SPDX-License-Identifier: Apache-2.0
// Builds a kernel benchmark program (bench/kernels/<name>.cc) against the engine sources, on demand:
// the engine files come from native/sources.json through scripts/native-sources.mjs (the same lists
// both builds use), limited to what a benchmark links: native/common, the runtime's CPU detection,
// kernel tables and GEMM driver, and the kernel families the tables include. Objects are cached in
// .cache/bench-kernels/ and rebuilt when their source or any native header is newer. Extra link
// libraries (OpenBLAS) are linked into this program only, never into the addon.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'

interface NativeSources {
  root: string
  sourcesOf(group: string): string[]
}

const flags = ['-std=c++17', '-O3', '-fopenmp', '-DNDEBUG', '-Wall', '-Wno-unused-parameter']
const isaFlags: Record<string, string[]> = { avx2: ['-mavx2', '-mfma', '-mf16c'], avx512: ['-mavx512f', '-mavx2', '-mfma', '-mf16c'], neon: [] }

function mtime(path: string): number {
  return existsSync(path) ? statSync(path).mtimeMs : 0
}

function newestHeader(dir: string): number {
  let t = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) t = Math.max(t, newestHeader(p))
    else if (e.name.endsWith('.h') || e.name.endsWith('.inl')) t = Math.max(t, mtime(p))
  }
  return t
}

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.slice(-3).join(' ')} exited with ${code}`))))
  })
}

/** The engine sources a kernel benchmark needs, with the ISA group of each. */
function benchSources(ns: NativeSources): Array<{ src: string; group: string }> {
  const runtime = /^native\/runtime\/(cpu_features|dispatch\w*|gemm_driver)\.cc$/
  const families = new Set(['gemm'])
  const runtimeDir = join(ns.root, 'native', 'runtime')
  for (const f of readdirSync(runtimeDir).filter((x) => /^dispatch\w*\.(h|cc)$/.test(x))) {
    for (const m of readFileSync(join(runtimeDir, f), 'utf8').matchAll(/#include "kernels\/(\w+)\//g)) families.add(m[1]!)
  }
  const kernel = (s: string): boolean => [...families].some((f) => s.startsWith(`native/kernels/${f}/`))
  const out = ns.sourcesOf('engine')
    .filter((s) => s.startsWith('native/common/') || runtime.test(s) || kernel(s))
    .map((src) => ({ src, group: 'engine' }))
  const isas = process.arch === 'x64' ? ['avx2', 'avx512'] : process.arch === 'arm64' ? ['neon'] : []
  for (const isa of isas) out.push(...ns.sourcesOf(isa).filter(kernel).map((src) => ({ src, group: isa })))
  return out
}

/** Compiles (incrementally) and links bench/kernels/<name>.cc; returns the program's path. */
export async function buildBench(repoRoot: string, name: string, libs: string[], jobs = 2): Promise<string> {
  const ns = (await import(pathToFileURL(join(repoRoot, 'scripts', 'native-sources.mjs')).href)) as NativeSources
  const outDir = join(repoRoot, '.cache', 'bench-kernels')
  mkdirSync(join(outDir, 'obj'), { recursive: true })
  const headers = newestHeader(join(repoRoot, 'native'))
  const units = [...benchSources(ns), { src: `bench/kernels/${name}.cc`, group: 'engine' }]
  const objects: string[] = []
  const compiles: Array<() => Promise<void>> = []
  for (const { src, group } of units) {
    const obj = join(outDir, 'obj', `${src.replace(/[/\\]/g, '_')}.o`)
    objects.push(obj)
    if (mtime(obj) > Math.max(mtime(join(repoRoot, src)), headers)) continue
    const args = [...flags, ...(isaFlags[group] ?? []), '-Inative', '-c', src, '-o', obj]
    compiles.push(() => run('g++', args, repoRoot))
  }
  const compiled = compiles.length
  if (compiled > 0) console.error(`# building ${name}: compiling ${compiles.length} of ${units.length} sources`)
  const workers = Array.from({ length: Math.max(1, jobs) }, async () => {
    for (let job = compiles.shift(); job !== undefined; job = compiles.shift()) await job()
  })
  await Promise.all(workers)
  const exe = join(outDir, basename(name))
  if (compiled === 0 && objects.every((o) => mtime(o) < mtime(exe))) return exe
  await run('g++', [...objects, '-fopenmp', ...libs, '-o', exe], repoRoot)
  return exe
}
