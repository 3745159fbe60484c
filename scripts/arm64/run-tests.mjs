#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The arm64 test run, executed by the arm64 Node under qemu-aarch64 (see scripts/arm64/test.mjs).
// tap spawns child node processes, which qemu-user cannot follow without binfmt_misc, so this is a plain
// ESM script: it imports the compiled modules from dist/ and prints TAP itself.
//   1. the addon's info() (arch must be this Node's arch; on arm64 the ISA must be neon),
//   2. the ONNX backend node tests the engine claims (one test point each); tests listed in
//      test/models/onnx-backend-expected-failures.json ({name: reason}) pass only if they really fail,
//   3. with --models, the fixture models in test/fixtures/models against the reference outputs in
//      test/fixtures/models/reference/ (max |diff| <= 1e-4 * max|ref| + 1e-5).
// Ends with `# arm64: N passed, N failed`; exits 1 on any failure. It also runs on x64 with the host
// Node (same output format), which is how arm64-only failures are told apart.
//   node scripts/arm64/run-tests.mjs [--models] [--no-operators] [--op Conv]... [--filter REGEX]
//                                    [--threads N] [--timeout SECONDS] [--expected-failures FILE]
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const label = process.arch

const { values } = parseArgs({
  options: {
    models: { type: 'boolean', default: false },
    'no-operators': { type: 'boolean', default: false },
    op: { type: 'string', multiple: true, default: [] },
    filter: { type: 'string' },
    threads: { type: 'string', default: '2' }, // model runs; backend tests use runBackendTest's default (1)
    timeout: { type: 'string', default: '300' }, // per test point, seconds (qemu is slow, not that slow)
    'expected-failures': { type: 'string' }, // default test/models/onnx-backend-expected-failures.json
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log('usage: run-tests.mjs [--models] [--no-operators] [--op OpType]... [--filter REGEX] [--threads N] [--timeout S] [--expected-failures FILE]')
  process.exit(0)
}
const timeoutMs = Number(values.timeout) * 1000
const threads = Number(values.threads)

let n = 0
let passed = 0
let failed = 0
const failures = []
const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' ').replace(/#/g, '\\#')
function ok(name, directive) {
  n++
  passed++
  console.log(`ok ${n} - ${oneLine(name)}${directive ? ` # ${oneLine(directive)}` : ''}`)
}
function notOk(name, reason) {
  n++
  failed++
  failures.push(`${name}: ${reason}`)
  console.log(`not ok ${n} - ${oneLine(name)} # ${oneLine(reason)}`)
}
function finish() {
  console.log(`1..${n}`)
  if (failures.length > 0) {
    console.log(`# failures (${failures.length}):`)
    for (const f of failures) console.log(`#   ${oneLine(f)}`)
  }
  console.log(`# ${label}: ${passed} passed, ${failed} failed`)
  process.exit(failed > 0 ? 1 : 0) // exit now: a timed-out native call may still hold a worker
}
function withTimeout(promise, what) {
  let timer
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${values.timeout} s (${what})`)), timeoutMs)
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}
const secs = (t0) => ((performance.now() - t0) / 1000).toFixed(1)

console.log('TAP version 14')
console.log(`# node ${process.version} ${process.platform}-${process.arch}, FLEXPIPE_ADDON=${process.env.FLEXPIPE_ADDON ?? '(node-gyp-build)'}`)
const dist = join(root, 'dist')
if (!existsSync(join(dist, 'test', 'helpers', 'onnx-backend.js'))) {
  notOk('compiled modules in dist/', 'dist/test/helpers/onnx-backend.js is missing: run `npm run build:ts`')
  finish()
}
const lib = await import(join(dist, 'lib', 'index.js'))
const { listBackendTests, claimedTests, runBackendTest, backendTestRoot } = await import(join(dist, 'test', 'helpers', 'onnx-backend.js'))
const { compareTensors, maxAbs } = await import(join(dist, 'test', 'helpers', 'compare.js'))

// 1. The addon: load it and check it is the build for this machine.
try {
  const info = lib.nativeInfo()
  console.log(`# addon info: ${JSON.stringify(info)}`)
  const problems = []
  if (info.arch !== process.arch) problems.push(`arch ${info.arch}, expected ${process.arch}`)
  if (process.arch === 'arm64' && info.isa !== 'neon') problems.push(`isa ${info.isa}, expected neon`)
  if (problems.length) notOk('addon info() matches this machine', problems.join('; '))
  else ok(`addon info() matches this machine: arch ${info.arch}, isa ${info.isa}, openmp ${info.openmp}, reader ${info.liburing ? 'io_uring' : 'pread'}`)
} catch (err) {
  notOk('addon loads', err.message)
  finish()
}

// 2. ONNX backend operator tests.
if (!values['no-operators']) {
  const t0 = performance.now()
  const all = listBackendTests()
  if (all.length === 0) {
    notOk('ONNX backend test data present', `no tests under ${backendTestRoot} (Debian package libonnx-testdata)`)
  } else {
    let tests = claimedTests(all)
    if (values.op.length > 0) tests = tests.filter((t) => t.ops.some((op) => values.op.includes(op)))
    if (values.filter) {
      const re = new RegExp(values.filter)
      tests = tests.filter((t) => re.test(t.name))
    }
    const expectedFile = values['expected-failures'] ?? join(root, 'test', 'models', 'onnx-backend-expected-failures.json')
    let expected = {}
    if (existsSync(expectedFile)) {
      try {
        expected = JSON.parse(readFileSync(expectedFile, 'utf8'))
      } catch (err) {
        notOk(`${expectedFile} parses`, err.message)
      }
    }
    console.log(`# operators: ${tests.length} claimed backend tests of ${all.length} in the data set, ${Object.keys(expected).length} listed as expected failures`)
    let unexpectedPasses = 0
    let expectedFailures = 0
    const slow = []
    for (const test of tests) {
      const t1 = performance.now()
      let r
      try {
        r = await withTimeout(runBackendTest(test), test.name)
      } catch (err) {
        r = { test, passed: false, reason: err.message }
      }
      slow.push([performance.now() - t1, test.name])
      const why = Object.hasOwn(expected, test.name) ? expected[test.name] : undefined
      if (why !== undefined) {
        const whyText = typeof why === 'string' ? why : JSON.stringify(why)
        if (r.passed) {
          unexpectedPasses++
          notOk(test.name, `unexpectedly passed; remove it from onnx-backend-expected-failures.json (listed: ${whyText})`)
        } else {
          expectedFailures++
          ok(test.name, `expected failure: ${whyText}`)
        }
      } else if (r.passed) ok(test.name)
      else notOk(test.name, r.reason ?? 'failed')
    }
    slow.sort((a, b) => b[0] - a[0])
    console.log(`# operators: ${tests.length} tests in ${secs(t0)} s (${expectedFailures} expected failures, ${unexpectedPasses} unexpected passes); slowest: ${slow.slice(0, 5).map(([ms, name]) => `${name} ${(ms / 1000).toFixed(1)} s`).join(', ')}`)
  }
}

// 3. Fixture models against the stored reference outputs.
function readTensor(dir, spec) {
  const buf = readFileSync(join(dir, spec.file))
  const copy = new Uint8Array(buf) // own, aligned ArrayBuffer
  const arrays = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, float64: Float64Array, uint8: Uint8Array, bool: Uint8Array }
  const Ctor = arrays[spec.dtype]
  if (!Ctor) throw new Error(`${spec.file}: unsupported dtype ${spec.dtype}`)
  if (copy.byteLength % Ctor.BYTES_PER_ELEMENT !== 0) throw new Error(`${spec.file}: ${copy.byteLength} bytes is not a whole number of ${spec.dtype}`)
  return lib.tensor(spec.dtype, spec.shape, new Ctor(copy.buffer, 0, copy.byteLength / Ctor.BYTES_PER_ELEMENT))
}

if (values.models) {
  const t0 = performance.now()
  const modelsDir = join(root, 'test', 'fixtures', 'models')
  const refDir = join(modelsDir, 'reference')
  // A manifest <base>.json applies to the model it names and to <base>.onnx and its variants <base>_*.onnx
  // (resnet_small_external, bert_tiny_opset17; see test/fixtures/README.md); the longest base wins.
  const manifests = existsSync(refDir)
    ? readdirSync(refDir).filter((f) => f.endsWith('.json')).map((f) => ({ base: basename(f, '.json'), ...JSON.parse(readFileSync(join(refDir, f), 'utf8')) }))
    : []
  const models = existsSync(modelsDir) ? readdirSync(modelsDir).filter((f) => f.endsWith('.onnx')).sort() : []
  if (models.length === 0) notOk('fixture models present', `no .onnx files in ${modelsDir}`)
  for (const model of models) {
    const base = basename(model, '.onnx')
    const m =
      manifests.find((x) => x.model === model) ??
      manifests.filter((x) => base === x.base || base.startsWith(`${x.base}_`)).sort((a, b) => b.base.length - a.base.length)[0]
    const name = `model ${model} matches the PyTorch reference`
    if (!m) {
      notOk(name, `no reference manifest in ${refDir}`)
      continue
    }
    const t1 = performance.now()
    let engine
    try {
      const feeds = {}
      for (const spec of m.inputs) feeds[spec.name] = readTensor(refDir, spec)
      engine = await withTimeout(lib.open(join(modelsDir, model), { threads }), `open ${model}`)
      const got = await withTimeout(engine.infer(feeds), `infer ${model}`)
      const details = []
      const problems = []
      for (const spec of m.outputs) {
        const want = readTensor(refDir, spec)
        const g = got[spec.name]
        if (!g) {
          problems.push(`no output ${spec.name}`)
          continue
        }
        if (g.dtype !== want.dtype) {
          problems.push(`${spec.name}: dtype ${g.dtype} != ${want.dtype}`)
          continue
        }
        const atol = 1e-4 * maxAbs(want) + 1e-5
        const c = compareTensors(g, want, atol, 0)
        details.push(`${spec.name} max|diff| ${c.maxAbsDiff.toExponential(2)} <= ${atol.toExponential(2)}`)
        if (!c.ok) problems.push(`${spec.name} [${want.dims.join(', ')}]: ${c.reason} > tolerance ${atol.toExponential(2)}`)
      }
      if (problems.length) notOk(name, problems.join('; '))
      else ok(`${name} (${details.join(', ')}; ${secs(t1)} s)`)
    } catch (err) {
      notOk(name, err.message)
    } finally {
      if (engine) await withTimeout(engine.close(), `close ${model}`).catch(() => {})
    }
  }
  console.log(`# models: ${models.length} models in ${secs(t0)} s (threads ${threads})`)
}

finish()
