// SPDX-License-Identifier: Apache-2.0
// runTrace on hand-made run reports: a plain run's ops laid end to end, a pipelined run's ops on the
// gate's clock with their waits for loads, and its loads from when they could start to when the queue
// up to them was in, without overlaps even when reads finish out of order.
import t from 'tap'
import type { NativePipelineResult } from '../../lib/native/binding.js'
import type { LoadQueue } from '../../lib/plan/execution-plan.js'
import { runTrace, type TracedPlan } from '../../lib/runtime/run-trace.js'
import { checkTrace } from '../helpers/plan-checks.js'

const plan: TracedPlan = {
  opNodes: ['conv1', 'relu1', 'fc'],
  opKinds: [
    { opType: 'Conv', native: 'Conv' },
    { opType: 'Relu', native: 'Unary' },
    { opType: 'Gemm', native: 'Gemm' },
  ],
  activationBase: 0,
  buffers: [
    { kind: 'loaded', name: 'conv1.weight', region: 0, offset: 0, bytes: 4096, from: 0, to: 0 },
    { kind: 'loaded', name: 'fc.weight', region: 0, offset: 0, bytes: 8192, from: 1, to: 2 },
  ],
  loads: { path: 'm.fpk', ranges: new Float64Array([0, 4096, 0, 4096, 8192, 0]), after: new Int32Array([-1, 0]), need: new Int32Array([1, 1, 2]) },
}

const events = (trace: ReturnType<typeof runTrace>, cat: string) => trace.traceEvents.filter((e) => e.cat === cat).map((e) => ({ name: e.name, ts: e.ts, dur: e.dur }))

t.test('a run without loads lays its ops end to end from their durations, and says so', async (t) => {
  const trace = runTrace({ ...plan, loads: undefined }, { opMs: new Float64Array([1.5, 0.25, 2]) }, 'm.onnx')
  checkTrace(t, trace, plan, 0, 'plain run')
  t.same(events(trace, 'op'), [
    { name: 'Conv conv1', ts: 0, dur: 1500 },
    { name: 'Relu relu1', ts: 1500, dur: 250 },
    { name: 'Gemm fc', ts: 1750, dur: 2000 },
  ])
  t.match(trace.otherData.clock, /laid end to end/)
  t.equal(trace.traceEvents.find((e) => e.name === 'process_name')!.args!.name, 'flexpipe m.onnx')
})

/** A pipelined run: an input load, then the plan's two; op 2 waits for the fc weight from 3.5 to 4 ms. */
function pipelined(loadEndMs: number[]): { report: Parameters<typeof runTrace>[1]; queue: LoadQueue } {
  const queue: LoadQueue = { path: 'm.fpk', ranges: new Float64Array([9, 4096, 65536, ...plan.loads!.ranges]), after: new Int32Array([-1, -1, 0]), need: new Int32Array([2, 2, 3]) }
  const pipeline = { ops: new Float64Array([1, 1, 1]), opStartMs: new Float64Array([0.5, 2, 4]), opEndMs: new Float64Array([1.5, 3.5, 5]), loadEndMs: new Float64Array(loadEndMs), computeWaitMs: 1, loadWaitMs: 0, direct: true, bytes: 16384, ms: 4 } as NativePipelineResult
  return { report: { opMs: pipeline.ops!, pipeline, loads: queue }, queue }
}

t.test('a pipelined run puts ops on the gate clock, waits before the ops that waited, loads on their track', async (t) => {
  const { report } = pipelined([0.2, 0.5, 4])
  const trace = runTrace(plan, report, 'm.fpk')
  checkTrace(t, trace, plan, 3, 'pipelined run')
  t.same(events(trace, 'op').map((e) => [e.ts, e.dur]), [[500, 1000], [2000, 1500], [4000, 1000]], 'ops as the gate timed them')
  t.same(events(trace, 'wait'), [
    { name: 'wait for load conv1.weight', ts: 0, dur: 500 },
    { name: 'wait for load fc.weight', ts: 3500, dur: 500 },
  ], 'op 0 waited for its weight, op 2 for the fc weight; op 1 needed nothing new')
  t.same(events(trace, 'load'), [
    { name: 'input load 0', ts: 0, dur: 200 },
    { name: 'load conv1.weight', ts: 200, dur: 300 },
    { name: 'load fc.weight', ts: 1500, dur: 2500 },
  ], 'the fc weight could start once op 0 was done (1.5 ms): the edge comp(0) < load(2)')
  t.same(trace.otherData.computeWaitMs, 1)
  t.match(trace.otherData.clock, /pipeline gate/)
})

t.test('loads that finish out of order are drawn to when the queue up to them was in, without overlaps', async (t) => {
  const { report } = pipelined([0.5, 0.2, 4])
  const trace = runTrace(plan, report, 'm.fpk')
  checkTrace(t, trace, plan, 3, 'out of order')
  t.same(events(trace, 'load').slice(0, 2), [
    { name: 'input load 0', ts: 0, dur: 500 },
    { name: 'load conv1.weight', ts: 500, dur: 0 },
  ], 'load 1 was in before load 0; ops saw it with load 0')
})

t.test('a run that was not profiled cannot be traced', async (t) => {
  t.throws(() => runTrace(plan, {}, 'm.fpk'), /not profiled/)
})
