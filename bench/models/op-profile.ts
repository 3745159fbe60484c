// SPDX-License-Identifier: Apache-2.0
// Per-operator timing helpers shared by profile.ts and models.bench.ts: flexpipe's
// Engine.inferProfiled() when the engine has it, and aggregation by operator type.
import type { EngineBase, Tensor } from '../../lib/index.js'
import type { Graph, Node } from '../../lib/model/ir.js'
import { median, round } from './cases.js'

export interface OpTime {
  readonly node: string
  readonly opType: string
  readonly native: string
  readonly ms: number
}

export type Profiled = (feeds: Record<string, Tensor>) => Promise<{ outputs: Record<string, Tensor>; ops: OpTime[] }>

export interface OpTypeRow {
  readonly opType: string
  readonly ms: number
  readonly share: number
  readonly count: number
  /** flexpipe: native kernel names used by this op type, with their ms. */
  readonly kernels?: Record<string, number>
}

export interface NodeRow {
  readonly node: string
  readonly opType: string
  readonly ms: number
}

export interface ProfileResult {
  readonly model: string
  readonly threads: number
  readonly runs: number
  readonly flexpipe?: Breakdown
  readonly ort?: Breakdown
  readonly errors: string[]
}

/** The profiling entry point, or undefined when this build of the engine has none. */
export function profiledInfer(engine: EngineBase): Profiled | undefined {
  const fn = (engine as unknown as { inferProfiled?: Profiled }).inferProfiled
  return typeof fn === 'function' ? fn.bind(engine) : undefined
}

export interface Breakdown {
  readonly wall_ms: number
  readonly ops_ms: number
  readonly byOpType: OpTypeRow[]
  /** The slowest nodes (median ms), to tell e.g. depthwise from pointwise convolutions. */
  readonly topNodes: NodeRow[]
  /** Every node in execution order (median ms). */
  readonly nodes: NodeRow[]
}

export const TOP_NODES = 15

/**
 * Per node of an ONNX graph, the value its fused chain ends in: its first output, followed through
 * each sole consumer that is a Relu, Clip or Add (the activations and residual adds both engines fold
 * into a convolution). onnxruntime names a node it rewrites after that value.
 */
export function chainOutputs(graph: Graph): Map<string, string> {
  const consumers = new Map<string, Node[]>()
  for (const n of graph.nodes) for (const i of n.inputs) if (i !== '') consumers.set(i, [...(consumers.get(i) ?? []), n])
  const out = new Map<string, string>()
  for (const n of graph.nodes) {
    let value = n.outputs[0]
    if (value === undefined) continue
    for (let next = consumers.get(value); next?.length === 1 && ['Relu', 'Clip', 'Add'].includes(next[0]!.opType); next = consumers.get(value)) {
      value = next[0]!.outputs[0]!
    }
    out.set(n.name, value)
  }
  return out
}

/**
 * The convolution-like nodes of both engines paired, with flexpipe's excess: where the time goes,
 * node by node. onnxruntime names a rewritten node after its output (`<node>_output_0_nchwc`, or
 * the fused activation's output), so a flexpipe node is paired with the onnxruntime node of its
 * name or, given `chains` (chainOutputs of the model), of the value its chain ends in (SqueezeNet's
 * expands, which the two engines run in different orders; ResNet's downsample convolution, which
 * onnxruntime runs before conv3 and flexpipe after it), and the rest in execution order, which both
 * engines share for a chain of convolutions. Returns [] when the two lists differ in length.
 */
export function pairConvNodes(
  flexpipe: readonly NodeRow[],
  ort: readonly NodeRow[],
  chains: ReadonlyMap<string, string> = new Map(),
): Array<{ node: string; flexpipe_ms: number; ort_ms: number }> {
  const convLike = (t: string) => t === 'Conv' || t === 'FusedConv' || t === 'Gemm' || t === 'FusedGemm'
  const f = flexpipe.filter((n) => convLike(n.opType))
  const o = ort.filter((n) => convLike(n.opType))
  if (f.length !== o.length) return []
  const stem = (name: string) => name.replace(/_nchwc$/, '').replace(/_output_\d+$/, '')
  const byName = new Map<string, number>()
  o.forEach((n, i) => byName.set(stem(n.node), i))
  const taken = new Set<number>()
  const partner = f.map((n) => {
    const chain = chains.get(n.node)
    const i = byName.get(n.node) ?? (chain === undefined ? undefined : byName.get(stem(chain)))
    if (i === undefined || taken.has(i)) return undefined // two residual branches end in one value
    taken.add(i)
    return i
  })
  const rest = o.map((_, i) => i).filter((i) => !taken.has(i))
  let next = 0
  return f.map((n, i) => ({ node: n.node, flexpipe_ms: n.ms, ort_ms: o[partner[i] ?? rest[next++]!]!.ms }))
}

/** An event of onnxruntime's profile file (Chrome trace format). */
export interface OrtTraceEvent {
  cat?: string
  name?: string
  ts?: number
  dur?: number
  args?: { op_name?: string }
}

/**
 * The timed runs in onnxruntime's profile events: the caller ran `every` model runs per timed one
 * (the untimed ones first) and `runs` timed ones last, so of the last every * runs model runs, each
 * every-th is kept. Per kept run: its duration and its nodes' kernel times.
 */
export function ortTimedRuns(events: readonly OrtTraceEvent[], runs: number, every = 1): { wall: number[]; ops: NodeRow[][] } {
  const modelRuns = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((a, b) => a.ts! - b.ts!)
  const timed = modelRuns.slice(-every * runs).filter((_, i) => i % every === every - 1)
  const ops = timed.map((r) =>
    events
      .filter((e) => e.cat === 'Node' && e.name?.endsWith('_kernel_time') && e.ts! >= r.ts! && e.ts! <= r.ts! + r.dur!)
      .map((e) => ({ node: e.name!.replace(/_kernel_time$/, ''), opType: e.args?.op_name ?? '?', ms: e.dur! / 1000 })),
  )
  return { wall: timed.map((r) => r.dur! / 1000), ops }
}

/** Per node: the median over runs; then per op type: sum, count of nodes, share of the total. */
export function aggregate(runs: ReadonlyArray<ReadonlyArray<{ node: string; opType: string; native?: string; ms: number }>>): Omit<Breakdown, 'wall_ms'> {
  const perNode = new Map<string, { opType: string; native?: string; ms: number[] }>()
  for (const run of runs) {
    for (const op of run) {
      const e = perNode.get(op.node) ?? { opType: op.opType, native: op.native, ms: [] }
      e.ms.push(op.ms)
      perNode.set(op.node, e)
    }
  }
  const byType = new Map<string, { ms: number; count: number; kernels: Map<string, number> }>()
  let total = 0
  const nodes: NodeRow[] = []
  for (const [node, e] of perNode) {
    const ms = median(e.ms)
    nodes.push({ node, opType: e.opType, ms: round(ms) })
    total += ms
    const row = byType.get(e.opType) ?? { ms: 0, count: 0, kernels: new Map<string, number>() }
    row.ms += ms
    row.count++
    if (e.native !== undefined) row.kernels.set(e.native, (row.kernels.get(e.native) ?? 0) + ms)
    byType.set(e.opType, row)
  }
  const byOpType = [...byType.entries()]
    .map(([opType, r]) => ({
      opType,
      ms: round(r.ms),
      share: round(r.ms / total, 4),
      count: r.count,
      ...(r.kernels.size > 0 ? { kernels: Object.fromEntries([...r.kernels.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, round(v)])) } : {}),
    }))
    .sort((a, b) => b.ms - a.ms)
  const topNodes = [...nodes].sort((a, b) => b.ms - a.ms).slice(0, TOP_NODES)
  return { ops_ms: round(total), byOpType, topNodes, nodes }
}
