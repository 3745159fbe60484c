// SPDX-License-Identifier: Apache-2.0
// planSvg on hand-made plans: one rectangle per planned buffer at its ops and addresses, text escaped,
// the caption's figures, round axis ticks; and the test's own XML checker rejects what is not XML.
import t from 'tap'
import { niceTicks } from '../../lib/plan/draw/svg-text.js'
import { peakLive, planSvg, type DrawnPlan } from '../../lib/plan/draw/plan-svg.js'
import type { PlannedBuffer } from '../../lib/plan/execution-plan.js'
import { checkPicture } from '../helpers/plan-checks.js'
import { findAll, parseXml } from '../helpers/xml.js'

const buffer = (kind: PlannedBuffer['kind'], name: string, region: 0 | 1, offset: number, bytes: number, from: number, to: number): PlannedBuffer => ({ kind, name, region, offset, bytes, from, to })

/** Four ops in a 4 MB arena: resident weights at the bottom, a loaded weight, activations above 1 MB. */
const plan: DrawnPlan = {
  arenaBytes: 4e6,
  activationBase: 1e6,
  opNodes: ['a', 'b', 'c', 'd'],
  regions: [
    { name: 'resident', offset: 0, bytes: 5e5 },
    { name: 'planned', offset: 5e5, bytes: 3.5e6 },
  ],
  loads: { path: 'm.fpk', ranges: new Float64Array([0, 4096, 5e5]), after: new Int32Array([0]), need: new Int32Array([0, 1, 1, 1]) },
  buffers: [
    buffer('resident', 'w0', 0, 0, 5e5, 0, 3),
    buffer('loaded', 'w1', 0, 5e5, 4096, 1, 2),
    buffer('activation', 'x', 1, 0, 2e6, 0, 1),
    buffer('activation', 'y', 1, 2e6, 1e6, 1, 3),
    buffer('intermediate', 'workspace@c', 1, 0, 1e6, 2, 2),
  ],
}

t.test('a plan is drawn as one rectangle per buffer at its ops and addresses', async (t) => {
  const svg = planSvg(plan, { model: '/some/dir/m.fpk', kind: 'budget', budgetBytes: 9e6 })
  checkPicture(t, svg, plan, 'hand-made plan')
  const root = parseXml(svg)
  const rects = findAll(root, (e) => e.name === 'g' && e.attrs.id === 'buffers')[0]!.children
  t.same(rects.map((r) => r.attrs['data-kind']), ['resident', 'loaded', 'activation', 'activation', 'intermediate'])
  t.match(rects[2]!.children[0]!.text, /^x: activation, 2000000 bytes at 1000000, ops 0\.\.1$/, 'a region-1 buffer counts from the activation base')
})

t.test('the caption states model, budget, arena, peak, ops and loads', async (t) => {
  const root = parseXml(planSvg(plan, { model: '/some/dir/m.fpk', kind: 'budget', budgetBytes: 9e6 }))
  const caption = findAll(root, (e) => e.attrs.id === 'caption')[0]!.children.map((e) => e.text)
  t.equal(caption[0], 'Memory plan of m.fpk')
  t.equal(caption[1], 'budget 9.00 MB · arena 4.00 MB · peak 3.50 MB taken at op 1 · 4 ops · 1 loads per inference (0.00 MB)')
  const onnx = findAll(parseXml(planSvg({ ...plan, loads: undefined }, { model: 'm.onnx', kind: 'onnx' })), (e) => e.attrs.id === 'caption')[0]!
  t.match(onnx.children[1]!.text, /^no budget \(every weight in memory\) · .* · no loads during an inference$/)
})

t.test('peakLive sums the bytes of the buffers each op holds', async (t) => {
  t.same(peakLive(plan.buffers, 4), { bytes: 5e5 + 4096 + 2e6 + 1e6, op: 1 })
  t.same(peakLive([buffer('activation', 'empty', 1, 0, 10, 2, 1)], 4), { bytes: 0, op: 0 }, 'an empty lifetime holds nothing')
})

t.test('an elastic plan states its sub-model and each shard version', async (t) => {
  const shards = [0, 1].map((l) => [0, 1, 2].map((j) => ({ shard: j, bits: l === 0 ? 32 : 4, preloaded: l === 0 && j === 0, bytes: 100 })))
  const svg = planSvg(plan, { model: 'spam.fpk', kind: 'elastic', elastic: { plan: { planner: 'flexpipe', targetMs: 40, depth: 2, width: 3, shards, modelledMs: 38.25 }, layers: 6, heads: 8, latencyFactor: 1.5 } })
  const root = parseXml(svg)
  const caption = findAll(root, (e) => e.attrs.id === 'caption')[0]!.children.map((e) => e.text)
  t.same(caption.slice(2), ['target 40 ms · flexpipe planner · modelled 38.3 ms (aimed at 1.05 T / 1.50, the measured / modelled time here)', 'sub-model: 2 of 6 layers × 3 of 8 heads kept; shard bitwidths in the table below'])
  const atRisk = planSvg(plan, { model: 'spam.fpk', kind: 'elastic', elastic: { plan: { planner: 'flexpipe', targetMs: 40, depth: 2, width: 3, shards, modelledMs: 38.25 }, layers: 6, heads: 8, latencyFactor: 3, targetAtRisk: true } })
  t.match(atRisk, 'modelled 38.3 ms (at risk: measured / modelled time 3.00 here, no sub-model meets T; this plan stays)', 'a target at risk says so')
  const cells = findAll(root, (e) => e.attrs.id === 'bits')[0]!.children.map((e) => e.text)
  t.same(cells.slice(-8), ['layer 0', 'fp32 p', 'fp32', 'fp32', 'layer 1', '4', '4', '4'], 'a row per layer kept, a column per head kept')
})

t.test('names with markup characters are escaped and the document stays well-formed', async (t) => {
  const name = `a<b>&"c"'d`
  const odd = { ...plan, buffers: [buffer('activation', name, 1, 0, 10, 0, 0)] }
  const svg = planSvg(odd, { model: 'x&<y>.onnx', kind: 'onnx' })
  const root = parseXml(svg)
  t.equal(findAll(root, (e) => e.name === 'title')[0]!.text, 'Memory plan of x&<y>.onnx')
  t.ok(findAll(root, (e) => e.name === 'title').some((e) => e.text.startsWith(`${name}: activation`)), 'the tooltip names the buffer as it is')
  t.notOk(svg.includes(name), 'the raw name never appears')
})

t.test('address ticks are round MB values within the arena; op ticks round ops', async (t) => {
  const root = parseXml(planSvg(plan, { model: 'm.fpk', kind: 'budget' }))
  const labels = findAll(root, (e) => e.attrs.id === 'axes')[0]!.children.filter((e) => e.name === 'text').map((e) => e.text)
  t.same(labels.filter((l) => l.endsWith('MB')), ['0 MB', '1 MB', '2 MB', '3 MB', '4 MB'])
  t.same(labels.filter((l) => /^\d+$/.test(l)), ['0', '1', '2', '3', '4'])
  t.same(niceTicks(7.3, 6), [0, 2, 4, 6])
  t.same(niceTicks(0.26, 5), [0, 0.1, 0.2])
  t.same(niceTicks(0.26, 10), [0, 0.05, 0.1, 0.15, 0.2, 0.25])
  t.same(niceTicks(86, 10, true), [0, 10, 20, 30, 40, 50, 60, 70, 80])
  t.same(niceTicks(0, 5), [0])
})

t.test('the XML checker rejects what is not well-formed', async (t) => {
  for (const bad of ['<a><b></a>', '<a x=1/>', '<a>&foo;</a>', '<a>1 < 2</a>', '<a/><b/>', '<a x="1" x="2"/>', '<a>', 'text<a/>', '<a>&amp</a>']) {
    t.throws(() => parseXml(bad), /XML/, bad)
  }
  t.equal(parseXml('<?xml version="1.0"?><!-- c --><a q="&lt;&#65;&#x42;">x &amp; y<b/></a>').attrs.q, '<AB')
})
