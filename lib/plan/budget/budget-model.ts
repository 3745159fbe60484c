// SPDX-License-Identifier: Apache-2.0
// The budget planner's model of a package graph: concrete shapes, each step's kernel options, live bytes
// per step, the Concats and outputs computed in place, and where each constant's stored forms are.
import type { DType } from '../../model/dtype.js'
import { inferGraph, type FoldFn, type InferOptions } from '../../model/infer-graph.js'
import type { ValueInfo } from '../../model/ir.js'
import { hostTensor } from '../../model/values.js'
import type { BlobEntry } from '../../package/index.js'
import type { StoredConstant } from '../../package/graph-codec.js'
import { concatsInPlace } from '../memory/concat-in-place.js'
import { outputsInPlace } from '../memory/outputs-in-place.js'
import { isConstantValue, stepLayers, type OptionContext, type StepLayer } from './layer-options.js'
import { liveBytesPerStep } from '../memory/live-bytes.js'
import { orderByProfile } from './kernel-options.js'
import type { BudgetModel, PlanProfile } from './plan-budget.js'

export type PackageModel = BudgetModel & { readonly blobs: ReadonlyMap<string, BlobEntry> }

/** What a model at one shape keeps of the model at the ceiling: its nodes' inputs and its in-place Concats. */
export interface CeilingModel {
  readonly inputs: NonNullable<InferOptions['ceilingInputs']>
  readonly concats: ReadonlySet<string>
}

/** The ceiling side of `budgetModel` at a shape of a range. */
export function ceilingOf(m: BudgetModel): CeilingModel {
  return { inputs: new Map(m.inferred.steps.map((s) => [s.node.name, s.inputs])), concats: new Set([...m.concats.blocks.values()].map((b) => b.output)) }
}

/** The planner's model of a package graph: shapes, kernel options, live bytes, blob lookup. */
export function budgetModel(
  graph: BudgetModel['graph'],
  stored: ReadonlyMap<string, StoredConstant>,
  blobs: ReadonlyMap<string, BlobEntry>,
  gemmNr: number,
  threads: number,
  fold: FoldFn,
  profile?: (layers: readonly StepLayer[]) => PlanProfile,
  /**
   * The model at one shape of a package prepared for dim ranges, made to match the plan at the ranges'
   * ceiling: kernels choose as at the ceiling (OpContext.ceiling), and only its in-place Concats stay so.
   */
  ceiling?: CeilingModel,
): PackageModel {
  const inputs = new Map<string, ValueInfo>(graph.inputs.map((d) => [d.name, { dtype: d.dtype, dims: d.dims! }]))
  const inferred = inferGraph(graph, inputs, { concrete: true, fold, foldCache: new Map(), ...(ceiling === undefined ? {} : { ceilingInputs: ceiling.inputs }) })
  const blobOf = (name: string, form: string): BlobEntry | undefined => {
    const b = stored.get(name)?.forms[form]
    return b === undefined ? undefined : blobs.get(b)
  }
  const ctx: OptionContext = {
    inferred,
    hasForm: (name, form) => blobOf(name, form) !== undefined,
    formBytes: (name, form) => blobOf(name, form)?.length ?? 0,
    gemmNr,
    threads,
  }
  const layers = stepLayers(ctx)
  const concats = concatsInPlace(graph, inferred, (v) => !isConstantValue(v), ceiling?.concats)
  // every graph output that is not a host constant is returned from a program tensor (budget-program.ts)
  const hostOutputs = outputsInPlace(graph, inferred, concats, (v) => !isConstantValue(v), (n) => hostTensor(inferred.values.get(n)!) === undefined)
  const live = liveBytesPerStep(graph, inferred, (n) => isConstantValue(inferred.values.get(n)), concats, hostOutputs)
  return orderByProfile({
    graph,
    inferred,
    layers,
    live: layers.map((l) => live[l.index]!),
    concats,
    hostOutputs,
    lookup: { blob: (name, form) => blobOf(name, form) },
    formShape: (name, form) => {
      const b = blobOf(name, form)
      return b?.dtype === undefined || b.dims === undefined ? undefined : { dtype: b.dtype as DType, dims: b.dims.slice() }
    },
    gemmNr,
    blobs,
    ...(profile === undefined ? {} : { profile: profile(layers) }),
  })
}
