// SPDX-License-Identifier: Apache-2.0
// One profiled run as a Chrome / Perfetto trace (Trace Event Format, JSON object form): a "compute"
// track with each op and each wait of an op for loads, a "load" track with each load the run read.
// Pure: the plan and the run's report in, the trace object out (`flexpipe plan --trace`; open the file
// in ui.perfetto.dev or chrome://tracing).
//
// Clocks. A pipelined run with profiling reports when each op started (after its wait) and ended, and
// when each load's last byte was in, on one clock (native/runtime/pipeline_gate.h); it does not report
// when a load started. A load is drawn from when it could start (the op it waits for done, the loads
// before it in) to when it and every load before it were in: ops wait for a prefix of the queue, so
// that is when the load counts for compute, and the track has no overlaps although reads may. A run
// without loads reports each op's duration only: its ops are laid end to end from 0. `otherData.clock`
// says which a trace has.
import { bufferOffset, type ExecutionPlan, type LoadQueue, type PlannedBuffer } from '../plan/execution-plan.js'
import type { RunReport } from './executor.js'

export interface TraceEvent {
  readonly name: string
  readonly cat: string
  /** 'X': a complete event (ts, dur); 'M': metadata (names of the process and tracks). */
  readonly ph: 'X' | 'M'
  /** Microseconds from the start of the run. */
  readonly ts: number
  readonly dur?: number
  readonly pid: number
  readonly tid: number
  readonly args?: Readonly<Record<string, string | number>>
}

export interface Trace {
  readonly traceEvents: TraceEvent[]
  readonly displayTimeUnit: 'ms'
  readonly otherData: Readonly<Record<string, string | number>>
}

export const tracks = { compute: 1, load: 2 } as const

export type TracedPlan = Pick<ExecutionPlan, 'opNodes' | 'opKinds' | 'buffers' | 'activationBase' | 'loads'>

/** ms to trace microseconds, to the nanosecond. */
const us = (ms: number): number => Math.round(ms * 1e6) / 1e3

/** ts and dur (µs) of [startMs, endMs], both on the nanosecond grid (an empty span when end < start). */
const span = (startMs: number, endMs: number): { ts: number; dur: number } => ({ ts: us(startMs), dur: Math.max(0, us(endMs - startMs)) })

export function runTrace(plan: TracedPlan, report: RunReport, model: string): Trace {
  const clock = opClock(report, plan.opNodes.length)
  const queue = report.loads
  const events: TraceEvent[] = [
    { name: 'process_name', cat: '__metadata', ph: 'M', ts: 0, pid: 1, tid: 0, args: { name: `flexpipe ${model}` } },
    { name: 'thread_name', cat: '__metadata', ph: 'M', ts: 0, pid: 1, tid: tracks.compute, args: { name: 'compute' } },
    { name: 'thread_name', cat: '__metadata', ph: 'M', ts: 0, pid: 1, tid: tracks.load, args: { name: 'load' } },
    ...opEvents(plan, clock),
    ...(queue === undefined || report.pipeline === undefined ? [] : pipelineEvents(plan, queue, report.pipeline.loadEndMs, clock)),
  ]
  const p = report.pipeline
  return {
    traceEvents: events,
    displayTimeUnit: 'ms',
    otherData: {
      model,
      ops: plan.opNodes.length,
      loads: queue?.after.length ?? 0,
      clock: clock.gate ? 'pipeline gate: op start and end, load end (loads drawn from when they could start)' : 'op durations laid end to end (a run without loads reports no start times)',
      ...(p === undefined ? {} : { computeWaitMs: p.computeWaitMs, loadWaitMs: p.loadWaitMs, bytesRead: p.bytes }),
    },
  }
}

interface OpClock {
  readonly start: ArrayLike<number>
  readonly end: ArrayLike<number>
  /** Whether the times are the gate's (else durations laid end to end). */
  readonly gate: boolean
}

/** When each op started and ended (ms): the gate's clock, or the op times laid end to end. */
function opClock(report: RunReport, ops: number): OpClock {
  const p = report.pipeline
  if (p?.opStartMs !== undefined && p.opEndMs !== undefined) return { start: p.opStartMs, end: p.opEndMs, gate: true }
  if (report.opMs === undefined || report.opMs.length !== ops) throw new Error(`runTrace: the run was not profiled (${report.opMs?.length ?? 0} op times for ${ops} ops)`)
  const start = new Float64Array(ops)
  const end = new Float64Array(ops)
  for (let k = 0, t = 0; k < ops; k++) {
    start[k] = t
    t += report.opMs[k]!
    end[k] = t
  }
  return { start, end, gate: false }
}

function opEvents(plan: TracedPlan, clock: OpClock): TraceEvent[] {
  return plan.opNodes.map((node, k) => {
    const kind = plan.opKinds[k]!
    return { name: `${kind.opType} ${node}`, cat: 'op', ph: 'X', ...span(clock.start[k]!, clock.end[k]!), pid: 1, tid: tracks.compute, args: { op: k, native: kind.native } }
  })
}

/** The loads of a pipelined run and the waits of ops for them. */
function pipelineEvents(plan: TracedPlan, queue: LoadQueue, loadEndMs: ArrayLike<number>, clock: OpClock): TraceEvent[] {
  const inputs = queue.after.length - (plan.loads?.after.length ?? 0)
  const names = Array.from(queue.after, (_, j) => (j < inputs ? `input load ${j}` : loadName(plan, queue, j)))
  return [...waitEvents(queue, names, loadEndMs, clock), ...loadEvents(queue, names, loadEndMs, clock.end)]
}

/**
 * The waits of ops for loads: from the end of the op before to the op's start, where it needed loads
 * that were not in yet when the op before ended; named after the last of them to come in.
 */
function waitEvents(queue: LoadQueue, names: readonly string[], loadEndMs: ArrayLike<number>, clock: OpClock): TraceEvent[] {
  const out: TraceEvent[] = []
  for (let k = 0; k < queue.need.length; k++) {
    const from = k === 0 ? 0 : clock.end[k - 1]!
    let last = -1
    for (let j = 0; j < queue.need[k]!; j++) if (loadEndMs[j]! > from && (last < 0 || loadEndMs[j]! >= loadEndMs[last]!)) last = j
    const s = span(from, clock.start[k]!)
    if (last >= 0 && s.dur > 0) out.push({ name: `wait for ${names[last]}`, cat: 'wait', ph: 'X', ...s, pid: 1, tid: tracks.compute, args: { op: k, load: last } })
  }
  return out
}

/** Each load from when it could start to when the queue up to it was in (see the header). */
function loadEvents(queue: LoadQueue, names: readonly string[], loadEndMs: ArrayLike<number>, opEnd: ArrayLike<number>): TraceEvent[] {
  const out: TraceEvent[] = []
  let prefixIn = 0
  let cursor = 0 // where the track's last event ended
  for (let j = 0; j < queue.after.length; j++) {
    const a = queue.after[j]!
    const start = Math.max(cursor, a >= 0 ? opEnd[a]! : 0)
    prefixIn = Math.max(prefixIn, loadEndMs[j]!)
    const [fileOffset, bytes, arenaOffset] = [queue.ranges[3 * j]!, queue.ranges[3 * j + 1]!, queue.ranges[3 * j + 2]!]
    if (bytes === 0) continue
    cursor = Math.max(prefixIn, start)
    const args = { load: j, bytes, fileOffset, arenaOffset, afterOp: a, inMs: loadEndMs[j]! }
    out.push({ name: names[j]!, cat: 'load', ph: 'X', ...span(start, cursor), pid: 1, tid: tracks.load, args })
  }
  return out
}

/** A load by the planned buffer it fills (the one at its offset taken when its first reader runs), else by its index. */
function loadName(plan: TracedPlan, queue: LoadQueue, j: number): string {
  const arenaOffset = queue.ranges[3 * j + 2]!
  let reader = queue.need.findIndex((n) => n > j)
  if (reader < 0) reader = queue.need.length - 1
  const filled = (b: PlannedBuffer): boolean => (b.kind === 'loaded' || b.kind === 'staged') && bufferOffset(plan, b) === arenaOffset && b.from <= reader && reader <= b.to
  return `load ${plan.buffers.find(filled)?.name ?? j}`
}
