// SPDX-License-Identifier: Apache-2.0
// `flexpipe plan` as a user runs it, on the three kinds of file: an ONNX model (its picture is the plan
// the engine applies, rectangle for rectangle), a memory-budget package at a budget, and an elastic
// package under a target latency; each writes a picture that is well-formed SVG and a valid trace.
// Bad paths, budgets, targets and option mixes exit non-zero with the typed error's code.
import { spawnSync } from 'node:child_process'
import { copyFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { open, prepare } from '../../lib/index.js'
import { planSvg } from '../../lib/plan/draw/plan-svg.js'
import { profileElastic } from '../../lib/prepare/profile-elastic.js'
import { prepareElastic } from '../../lib/prepare/prepare-elastic.js'
import type { Trace } from '../../lib/runtime/run-trace.js'
import { tempDir, threads } from '../helpers/budget.js'
import { fixtures, randomFloat, repoRoot } from '../helpers/data.js'
import { checkPicture } from '../helpers/plan-checks.js'
import { writeTinyEncoder } from '../helpers/tiny-encoder.js'
import { findAll, parseXml } from '../helpers/xml.js'

const main = join(repoRoot, 'dist', 'lib', 'cli', 'main.js')
const dir = tempDir(t, 'flexpipe-plan-cli-')
const onnx = join(fixtures, 'models', 'resnet_small.onnx')

function flexpipe(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [main, ...args], { encoding: 'utf8' })
}

/** Runs `flexpipe plan` writing both files; checks the exit, the SVG's rectangles and the trace's ops. */
function planFiles(t: Test, name: string, args: string[]): { svg: string; trace: Trace } {
  const svgPath = join(dir, `${name}.svg`)
  const tracePath = join(dir, `${name}.json`)
  const r = flexpipe('plan', ...args, '--threads', String(threads), '--svg', svgPath, '--trace', tracePath)
  t.equal(r.status, 0, `${name}: exit 0${r.status === 0 ? '' : `: ${r.stderr}`}`)
  const [, buffers, ops] = /: (\d+) buffers over (\d+) ops/.exec(r.stdout) ?? []
  const svg = readFileSync(svgPath, 'utf8')
  const rects = findAll(parseXml(svg), (e) => e.name === 'rect' && e.attrs['data-kind'] !== undefined)
  t.equal(rects.length, Number(buffers), `${name}: the picture has the ${buffers} buffers the command reports`)
  const trace = JSON.parse(readFileSync(tracePath, 'utf8')) as Trace
  t.equal(trace.traceEvents.filter((e) => e.cat === 'op').length, Number(ops), `${name}: the trace has the plan's ${ops} ops`)
  t.equal(trace.otherData.ops, Number(ops))
  return { svg, trace }
}

t.test('an ONNX model: the picture is the plan its engine applies', async (t) => {
  const { svg, trace } = planFiles(t, 'onnx', [onnx, '--dim', 'batch=1'])
  const engine = await open(onnx, { threads })
  const plan = await engine.executionPlan({ input: randomFloat([1, 3, 64, 64], 1) })
  await engine.close()
  checkPicture(t, svg, plan, 'resnet_small.onnx by the command')
  t.equal(svg, planSvg(plan, { model: onnx, kind: 'onnx' }), 'the same picture as planSvg of the engine’s plan')
  t.equal(trace.otherData.loads, 0, 'every weight in memory: nothing loaded')
})

t.test('a memory-budget package at a budget: weights loaded during the traced inference', async (t) => {
  const model = join(dir, 'vgg.onnx')
  copyFileSync(join(fixtures, 'models', 'vgg_small.onnx'), model)
  const report = await prepare(model, join(dir, 'vgg.fpk'), { dims: { batch: 1 }, threads })
  const { svg, trace } = planFiles(t, 'budget', [join(dir, 'vgg.fpk'), '--budget', String(report.minimumBudget)])
  t.match(svg, `budget ${(report.minimumBudget / 1e6).toFixed(2)} MB`, 'the caption states the budget')
  t.ok(findAll(parseXml(svg), (e) => e.attrs['data-kind'] === 'loaded').length > 0, 'the picture has loaded weights')
  t.ok((trace.otherData.loads as number) > 0 && trace.traceEvents.some((e) => e.cat === 'load'), `the trace has ${trace.otherData.loads} loads`)
  t.match(trace.otherData.clock, /pipeline gate/)
  const low = flexpipe('plan', join(dir, 'vgg.fpk'), '--budget', '1MB', '--svg', join(dir, 'x.svg'))
  t.not(low.status, 0, 'a budget below the minimum exits non-zero')
  t.match(low.stderr, /minimum.*\[ERR_FLEXPIPE_BUDGET\]/, 'naming the minimum')
})

t.test('an elastic package under a target: the picture states the sub-model and bitwidths', async (t) => {
  await writeTinyEncoder(join(dir, 'tiny'))
  const pkg = join(dir, 'tiny.fpk')
  await prepareElastic(join(dir, 'tiny'), pkg)
  await profileElastic(pkg, { threads, direct: false, repeats: 1, seqs: [16] })
  const common = [pkg, '--dim', 'sequence=16', '--buffered']
  const tight = flexpipe('plan', ...common, '--target-ms', '0.001', '--threads', String(threads), '--svg', join(dir, 'x.svg'))
  const minimum = Number(/at least ([\d.]+) ms/.exec(tight.stderr)?.[1])
  t.ok(tight.status === 1 && /\[ERR_FLEXPIPE_LATENCY\]/.test(tight.stderr) && minimum > 0, `a target below the smallest sub-model exits 1 naming the minimum (${minimum} ms)`)
  const { svg, trace } = planFiles(t, 'elastic', [...common, '--target-ms', String(Math.ceil(3 * minimum)), '--preload', '4096'])
  t.match(svg, `target ${Math.ceil(3 * minimum)} ms`, 'the caption states the target')
  t.match(svg, /sub-model: \d of 3 layers × \d of 4 heads kept/, 'and the sub-model')
  t.ok(findAll(parseXml(svg), (e) => e.attrs.id === 'bits')[0]!.children.length > 3, 'the bitwidths table is drawn')
  t.ok(trace.traceEvents.some((e) => e.name.startsWith('input load')), 'the trace shows the embedding rows read first')
  const unprofiled = flexpipe('plan', ...common, '--target-ms', '100', '--threads', '1', '--svg', join(dir, 'x.svg'))
  t.match(unprofiled.stderr, /\[ERR_FLEXPIPE_PROFILE\]/, 'no device profile for 1 thread: the profile error')
  t.ok(flexpipe('plan', pkg, '--budget', '10MB', '--svg', join(dir, 'x.svg')).stderr.includes('ERR_FLEXPIPE_INVALID_ARGUMENT'), '--budget on an elastic package is an argument error')
})

t.test('bad paths and option mixes exit non-zero with the typed error', async (t) => {
  const cases: Array<[string, string[], RegExp]> = [
    ['a missing model', [join(dir, 'nope.onnx'), '--svg', join(dir, 'x.svg')], /nope\.onnx.*\[ERR_FLEXPIPE_IO\]/],
    ['--budget on an ONNX model', [onnx, '--budget', '10MB', '--svg', join(dir, 'x.svg')], /need a package.*\[ERR_FLEXPIPE_INVALID_ARGUMENT\]/],
    ['neither --svg nor --trace', [onnx, '--dim', 'batch=1'], /--svg out\.svg.*\[ERR_FLEXPIPE_INVALID_ARGUMENT\]/],
    ['an unwritable picture path', [onnx, '--dim', 'batch=1', '--svg', join(dir, 'no', 'such', 'dir', 'x.svg')], /failed to write .*x\.svg.*\[ERR_FLEXPIPE_IO\]/],
    ['a symbolic dim not given', [onnx, '--svg', join(dir, 'x.svg')], /--dim batch=N.*\[ERR_FLEXPIPE_INVALID_ARGUMENT\]/],
  ]
  for (const [what, args, message] of cases) {
    const r = flexpipe('plan', ...args)
    t.equal(r.status, 1, `${what}: exit 1`)
    t.match(r.stderr, message, `${what}: ${r.stderr.trim().split('\n')[0]}`)
  }
  const bare = flexpipe('plan')
  t.equal(bare.status, 2, 'no model: the usage, exit 2')
  t.match(bare.stderr, /flexpipe plan <model\.onnx\|model\.fpk>/)
})
