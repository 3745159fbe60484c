// SPDX-License-Identifier: Apache-2.0
// The ExecutionPlan of a memory-budget plan (FlexNN's online stage as data for the one executor):
//
//   arena     [resident constants | planned region: activations, workspaces and weights at their
//             planned offsets, pinned weights at its top]
//   resident  small constants (from their blobs, or transformed host data) and the pinned weights,
//             read once when the plan is applied (the resident constants only when the slicing changed)
//   loads     the weights the plan does not pin, in the type-based allocator's order, each after the op
//             whose bytes it reuses (comp(i) < load(j)) and before the first op that reads it
//   buffers   the preload-aware memory plan's tensors at their placements (a loaded weight from its
//             allocation step, which preloading moves before its first use), and the resident constants
import { alignUp } from '../../align.js'
import { PackageError } from '../../errors.js'
import { parseFormKey } from '../../model/forms.js'
import type { TensorData } from '../../model/ir.js'
import type { BlobEntry } from '../../package/index.js'
import type { ExecutionPlan, PlannedBuffer, ResidentWrite } from '../execution-plan.js'
import { finishProgram, type ConstantSource } from './budget-program.js'
import { pipelineEdges } from './pipeline-edges.js'
import type { BudgetPlan } from './plan-budget.js'
import { planSchedule } from './plan-times.js'

/** Runs a form's transform on a host constant (the kernels' prepack, which is native). */
export type TransformFn = (data: TensorData, transform: { readonly transform: string; readonly ints: readonly number[] }, node: string) => TensorData

/** Offset of the planned region: the resident constants below it, rounded to a page (O_DIRECT reads). */
export function plannedBase(plan: BudgetPlan): number {
  return alignUp(plan.build.residentBytes, 4096)
}

/**
 * The plan for package `path` with blobs `blobs`. With `keepResident` the resident constants written
 * by the plan before are kept (a re-plan that kept the slicing writes only the pinned weights again).
 */
export function budgetExecutionPlan(plan: BudgetPlan, path: string, blobs: ReadonlyMap<string, BlobEntry>, transform: TransformFn, keepResident: boolean): ExecutionPlan {
  const b = plan.build
  const p = plan.plan
  const base = plannedBase(plan)
  const blob = (name: string): BlobEntry => {
    const e = blobs.get(name)
    if (e === undefined) throw new PackageError(`package ${path}: blob '${name}' is missing; re-run flexpipe prepare`, { blob: name })
    return e
  }
  const rangesOf = (tensors: readonly number[]): Float64Array => {
    const out = new Float64Array(tensors.length * 3)
    tensors.forEach((t, j) => {
      const l = b.loads[t]!
      out.set([blob(l.blob).offset + l.start, l.bytes, base + p.placements[t]!.offset], j * 3)
    })
    return out
  }
  const resident: ResidentWrite[] = keepResident ? [] : residentConstants(b.resident, path, blob, transform)
  const pinned = p.order.weight.filter((t) => p.placements[t]!.pinned)
  if (pinned.length > 0) resident.push({ kind: 'file', path, ranges: rangesOf(pinned), mode: 'as-loads' })
  const schedule = planSchedule(b, p)
  const edges = pipelineEdges(schedule)
  return {
    program: finishProgram(b, p, base),
    inputs: b.inputs,
    outputs: b.outputs,
    opNodes: b.opNodes,
    opKinds: b.opKinds,
    arenaBytes: base + p.arenaBytes,
    keepBytes: keepResident ? base : 0,
    activationBase: 0,
    resident,
    ...(schedule.tensors.length === 0 ? {} : { loads: { path, ranges: rangesOf(schedule.tensors), after: edges.after, need: edges.need } }),
    regions: [
      { name: 'resident', offset: 0, bytes: b.residentBytes },
      { name: 'planned', offset: base, bytes: p.arenaBytes - p.pinnedBytes },
      { name: 'pinned', offset: base + p.arenaBytes - p.pinnedBytes, bytes: p.pinnedBytes },
    ],
    buffers: plannedBuffers(plan, base),
  }
}

/** The memory layout of a plan: its resident constants, then every tensor of its planning problem. */
function plannedBuffers(plan: BudgetPlan, base: number): PlannedBuffer[] {
  const { build: b, plan: p } = plan
  const last = b.ops - 1
  const out: PlannedBuffer[] = b.resident.map((r) => ({ kind: 'resident', name: r.source.kind === 'blob' ? r.source.blob : r.source.node, region: 0, offset: r.offset, bytes: r.bytes, from: 0, to: last }))
  b.problem.tensors.forEach((t, i) => {
    const at = p.placements[i]!
    const kind = t.kind !== 'weight' ? t.kind : at.pinned ? 'pinned' : 'loaded'
    const from = kind === 'pinned' ? 0 : kind === 'loaded' ? at.allocStep : Math.max(0, t.first)
    out.push({ kind, name: t.name ?? `${t.kind} ${i}`, region: 0, offset: base + at.offset, bytes: t.bytes, from, to: kind === 'pinned' ? last : Math.min(last, t.last) })
  })
  return out
}

/** The writes of the resident constants: host data (transformed to its form) and one read of the blobs. */
function residentConstants(
  constants: ReadonlyArray<{ readonly offset: number; readonly source: ConstantSource }>,
  path: string,
  blob: (name: string) => BlobEntry,
  transform: TransformFn,
): ResidentWrite[] {
  const writes: ResidentWrite[] = []
  const ranges: number[] = []
  for (const r of constants) {
    const s = r.source
    if (s.kind === 'blob') {
      const e = blob(s.blob)
      ranges.push(e.offset, e.length, r.offset)
    } else {
      const form = parseFormKey(s.form)
      writes.push({ kind: 'data', offset: r.offset, data: (form === undefined ? s.data : transform(s.data, form, s.node)).data })
    }
  }
  if (ranges.length > 0) writes.push({ kind: 'file', path, ranges: new Float64Array(ranges), mode: 'buffered' })
  return writes
}
