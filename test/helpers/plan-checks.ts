// SPDX-License-Identifier: Apache-2.0
// Checks shared by the plan picture and trace tests: that a plan's memory layout (ExecutionPlan.buffers)
// is the layout its program and load queue use, that a picture draws exactly that layout, and that a
// trace is a valid Trace Event Format file of the run.
import type { Test } from 'tap'
import { dtypeBytes, dtypeFromCode } from '../../lib/model/dtype.js'
import { bufferOffset, type ExecutionPlan, type PlannedBuffer } from '../../lib/plan/execution-plan.js'
import { plotArea, type DrawnPlan } from '../../lib/plan/draw/plan-svg.js'
import { maxRank } from '../../lib/plan/program-builder.js'
import type { Trace } from '../../lib/runtime/run-trace.js'
import { findAll, parseXml } from './xml.js'

interface Slot {
  readonly region: number
  readonly offset: number
  readonly bytes: number
}

/** The tensor slots of a program descriptor (native/runtime/program.h) and each op's slots. */
export function programSlots(program: Float64Array): { slots: Slot[]; ops: number[][] } {
  const nSlots = program[1]!
  const nOps = program[2]!
  const slots: Slot[] = []
  let p = 3
  for (let s = 0; s < nSlots; s++, p += 4 + maxRank) {
    const dims = Array.from(program.subarray(p + 4, p + 4 + program[p + 3]!))
    slots.push({ region: program[p]!, offset: program[p + 1]!, bytes: dims.reduce((a, d) => a * d, 1) * dtypeBytes(dtypeFromCode(program[p + 2]!)!) })
  }
  const ops: number[][] = []
  for (let k = 0; k < nOps; k++) {
    const [nIn, nOut, nInts, nFloats] = [program[p + 1]!, program[p + 2]!, program[p + 3]!, program[p + 4]!]
    ops.push(Array.from(program.subarray(p + 5, p + 5 + nIn + nOut)).filter((s) => s >= 0))
    p += 5 + nIn + nOut + nInts + nFloats
  }
  return { slots, ops }
}

const end = (plan: Pick<ExecutionPlan, 'activationBase'>, b: PlannedBuffer): number => bufferOffset(plan, b) + b.bytes
const liveAt = (b: PlannedBuffer, k: number): boolean => b.from <= k && k <= b.to
const inside = (plan: ExecutionPlan, b: PlannedBuffer, at: number, bytes: number): boolean => bufferOffset(plan, b) <= at && at + bytes <= end(plan, b)

/**
 * The layout is one the program can run in: every buffer inside the arena and within the program's ops,
 * no two buffers sharing bytes at the same op (FlexNN's non-overlap constraint), every tensor an op
 * touches inside a buffer live at that op, and every load inside a buffer its first reader finds live,
 * taken from when the load may start or later, with no other buffer on its bytes from when the load
 * may start until that reader.
 */
export function checkLayout(t: Test, plan: ExecutionPlan, what: string): void {
  const ops = plan.opNodes.length
  const bufs = plan.buffers
  const outside = bufs.filter((b) => bufferOffset(plan, b) < 0 || end(plan, b) > plan.arenaBytes || b.from < 0 || b.to > ops - 1 || b.bytes < 0)
  t.same(outside.map((b) => b.name), [], `${what}: all ${bufs.length} buffers inside the arena (${plan.arenaBytes} bytes) and the ${ops} ops`)
  const clashes: string[] = []
  const sorted = [...bufs].filter((b) => b.bytes > 0 && b.to >= b.from).sort((a, b) => bufferOffset(plan, a) - bufferOffset(plan, b))
  sorted.forEach((a, i) => {
    for (let j = i + 1; j < sorted.length && bufferOffset(plan, sorted[j]!) < end(plan, a); j++) {
      const b = sorted[j]!
      if (a.from <= b.to && b.from <= a.to) clashes.push(`${a.name} / ${b.name}`)
    }
  })
  t.same(clashes, [], `${what}: no two buffers share bytes at one op`)
  const { slots, ops: opSlots } = programSlots(plan.program)
  const homeless: string[] = []
  const check = (slot: number, k: number): void => {
    const s = slots[slot]!
    if (s.region > 1 || s.bytes === 0) return
    const at = s.region === 1 ? plan.activationBase + s.offset : s.offset
    if (!bufs.some((b) => liveAt(b, k) && inside(plan, b, at, s.bytes))) homeless.push(`op ${k} (${plan.opNodes[k]}) slot ${slot} [${at}, +${s.bytes})`)
  }
  opSlots.forEach((ss, k) => ss.forEach((s) => check(s, k)))
  plan.inputs.forEach((i) => check(i.tensor, 0))
  plan.outputs.forEach((o) => o.source.kind === 'tensor' && check(o.source.tensor, ops - 1))
  t.same(homeless.slice(0, 5), [], `${what}: every tensor an op touches is in a buffer live at that op`)
  checkLoads(t, plan, what)
}

function checkLoads(t: Test, plan: ExecutionPlan, what: string): void {
  const q = plan.loads
  if (q === undefined) return
  const bad: string[] = []
  for (let j = 0; j < q.after.length; j++) {
    const [at, bytes] = [q.ranges[3 * j + 2]!, q.ranges[3 * j + 1]!]
    const first = q.need.findIndex((n) => n > j)
    const reader = first < 0 ? plan.opNodes.length - 1 : first
    const start = q.after[j]! + 1
    const own = plan.buffers.find((b) => (b.kind === 'loaded' || b.kind === 'staged') && liveAt(b, reader) && inside(plan, b, at, bytes))
    const taken = plan.buffers.filter((b) => b !== own && b.to >= start && b.from <= reader && bufferOffset(plan, b) < at + bytes && at < end(plan, b))
    const early = own !== undefined && own.from < start
    if (own === undefined || early || taken.length > 0) bad.push(`load ${j} [${at}, +${bytes}) ops ${start}..${reader}: ${own === undefined ? 'no buffer' : early ? `${own.name} taken from op ${own.from}` : taken.map((b) => b.name).join(', ')}`)
  }
  t.same(bad.slice(0, 5), [], `${what}: each of the ${q.after.length} loads fills its own buffer, taken from when the load may start or later, and no other buffer takes those bytes from then to its reader`)
}

/** The picture parses as XML and draws one rectangle per buffer at the plan's scale, inside the plot. */
export function checkPicture(t: Test, svg: string, plan: DrawnPlan, what: string): void {
  const root = parseXml(svg)
  t.equal(root.name, 'svg', `${what}: an <svg> document`)
  const group = findAll(root, (e) => e.name === 'g' && e.attrs.id === 'buffers')[0]
  const rects = group?.children.filter((e) => e.name === 'rect') ?? []
  t.equal(rects.length, plan.buffers.length, `${what}: one rectangle per buffer (${plan.buffers.length})`)
  const sx = plotArea.width / Math.max(1, plan.opNodes.length)
  const sy = plotArea.height / plan.arenaBytes
  const near = (a: string | undefined, b: number): boolean => Math.abs(Number(a) - b) <= 1e-3
  const wrong = plan.buffers.flatMap((b, i) => {
    const r = rects[i]?.attrs ?? {}
    const want = { x: plotArea.left + b.from * sx, width: (b.to - b.from + 1) * sx, y: plotArea.top + plotArea.height - end(plan, b) * sy, height: b.bytes * sy }
    const ok = near(r.x, want.x) && near(r.width, want.width) && near(r.y, want.y) && near(r.height, want.height) && r['data-kind'] === b.kind
    return ok ? [] : [`${b.name}: ${JSON.stringify(r)} != ${JSON.stringify(want)}`]
  })
  t.same(wrong.slice(0, 5), [], `${what}: each rectangle's x/width is its buffer's ops and y/height its offset/bytes`)
  const out = rects.filter((e) => {
    const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((k) => Number(e.attrs[k]))
    return x! < plotArea.left - 1e-3 || y! < plotArea.top - 1e-3 || x! + w! > plotArea.left + plotArea.width + 1e-3 || y! + h! > plotArea.top + plotArea.height + 1e-3
  })
  t.equal(out.length, 0, `${what}: every rectangle lies inside the arena's plot`)
}

/**
 * The trace is Trace Event Format (every event has ph, name, ts, pid, tid; complete events a cat and
 * dur >= 0), names its compute and load tracks, has one op event per program op in order and one event
 * per load of the run, and no two events of a track overlap beyond rounding.
 */
export function checkTrace(t: Test, trace: Trace, plan: Pick<ExecutionPlan, 'opNodes' | 'opKinds'>, loads: number, what: string): void {
  const json = JSON.parse(JSON.stringify(trace)) as { traceEvents: Array<Record<string, unknown>>; displayTimeUnit: unknown }
  t.equal(json.displayTimeUnit, 'ms', `${what}: displayTimeUnit`)
  const events = json.traceEvents
  const malformed = events.filter((e) => typeof e.ph !== 'string' || typeof e.name !== 'string' || !Number.isFinite(e.ts) || (e.ts as number) < 0 || !Number.isInteger(e.pid) || !Number.isInteger(e.tid))
  t.same(malformed, [], `${what}: every event has ph, name, ts >= 0, pid and tid`)
  const complete = events.filter((e) => e.ph === 'X')
  t.same(complete.filter((e) => typeof e.cat !== 'string' || !((e.dur as number) >= 0)), [], `${what}: every complete event has a cat and dur >= 0`)
  const names = events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => `${e.tid}:${(e.args as { name: string }).name}`)
  t.same(names, ['1:compute', '2:load'], `${what}: compute and load tracks named`)
  const ops = complete.filter((e) => e.cat === 'op')
  t.same(ops.map((e) => (e.args as { op: number }).op), plan.opNodes.map((_, k) => k), `${what}: one op event per program op, in order`)
  t.same(ops.map((e) => e.name), plan.opNodes.map((n, k) => `${plan.opKinds[k]!.opType} ${n}`), `${what}: op events named by op type and node`)
  t.ok(ops.every((e) => e.tid === 1) && complete.filter((e) => e.cat === 'load').every((e) => e.tid === 2), `${what}: ops on the compute track, loads on the load track`)
  t.equal(complete.filter((e) => e.cat === 'load').length, loads, `${what}: one event per load (${loads})`)
  for (const tid of [1, 2]) {
    const track = complete.filter((e) => e.tid === tid).sort((a, b) => (a.ts as number) - (b.ts as number))
    const overlaps = track.filter((e, i) => i > 0 && (track[i - 1]!.ts as number) + (track[i - 1]!.dur as number) > (e.ts as number) + 0.01)
    t.same(overlaps.map((e) => e.name), [], `${what}: no overlaps on track ${tid} (${track.length} events)`)
  }
}
