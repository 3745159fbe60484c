// SPDX-License-Identifier: Apache-2.0
// Shape inference over a whole graph (Nimble's shape functions): walks the nodes in order,
// runs each op's shape function, folds what is known before the run (shape arithmetic in
// TypeScript, constant subgraphs with the native kernels), and lists the steps left to execute.
import { ModelFormatError, UnsupportedOperatorError, ValueNeededError } from '../errors.js'
import { allConcrete } from './dims.js'
import type { Dim, Graph, Node, TensorData, ValueInfo } from './ir.js'
import { valueBytes } from './ir.js'
import type { KernelCall, OpContext, OpDef, OpResult } from './ops/op-def.js'
import { opDef } from './ops/registry.js'
import { constantInfo, hostTensor } from './values.js'

/** A node that must run: a native kernel call, or an alias (its output reuses its input's memory). */
export interface Step {
  readonly node: Node
  readonly inputs: ReadonlyArray<ValueInfo | undefined>
  readonly outputs: readonly ValueInfo[]
  readonly kernel?: KernelCall
  readonly aliasOf?: number
}

/** Runs a kernel on host tensors and returns its outputs (the engine passes the native runOp). */
export type FoldFn = (node: Node, call: KernelCall, inputs: ReadonlyArray<TensorData | undefined>, outputs: readonly ValueInfo[]) => TensorData[]

export interface InferOptions {
  /** Build kernel calls for the steps (all dims must then be concrete). */
  readonly concrete: boolean
  readonly fold?: FoldFn
  /** Folded outputs of nodes that depend only on initializers, reused across passes. */
  readonly foldCache?: Map<string, ValueInfo[]>
  /**
   * Operators outside the ONNX domains that graphs flexpipe builds itself may use (the elastic
   * executor's 'flexpipe' nodes), by `domain.opType`. Imported ONNX graphs never get these.
   */
  readonly internalOps?: ReadonlyMap<string, OpDef>
  /**
   * Nodes that depend on the inputs' shapes fold (run at plan time) only when their outputs take at most
   * this many bytes; larger ones stay steps. Shape buckets set it, so that what must be recomputed for
   * each new shape of a bucket stays small (lib/runtime/bucket-plans.ts). Default: no limit.
   */
  readonly maxFoldBytes?: number
  /**
   * Nodes that depend on the inputs' shapes fold only when named here (the ones a bucket's ceiling pass
   * folded: InferredGraph.foldedNodes), so that every pass of a bucket folds the same nodes.
   */
  readonly foldNodes?: ReadonlySet<string>
  /** Per node, its inputs at the ceiling of the bucket being planned (OpContext.ceiling). */
  readonly ceilingInputs?: ReadonlyMap<string, ReadonlyArray<ValueInfo | undefined>>
  /**
   * A concrete pass of a graph with data-dependent sizes (OpContext.dataDim): by symbol, every size of
   * the symbolic pass's InferredGraph.dataDims, as read when its op ran or at its bound before that. An op
   * whose symbol is missing takes the size the pass knows, or else its bound. Without this option a
   * concrete pass refuses sizes it does not know. Symbolic passes always accept them.
   */
  readonly dataDims?: ReadonlyMap<string, number>
}

/** An output dim whose size depends on the input values: its symbol, the node, and its upper bound. */
export interface DataDim {
  readonly symbol: string
  readonly node: string
  readonly bound: Dim
}

export interface InferredGraph {
  readonly values: ReadonlyMap<string, ValueInfo>
  readonly steps: readonly Step[]
  /** Values that depend only on initializers (the same in every pass). */
  readonly staticValues: ReadonlySet<string>
  /** Nodes that depend on the inputs' shapes and were folded by running their kernel at plan time. */
  readonly foldedNodes: ReadonlySet<string>
  /** The data-dependent dims, in node order (at most one per node). */
  readonly dataDims: readonly DataDim[]
}

function nodeInputs(node: Node, values: ReadonlyMap<string, ValueInfo>): Array<ValueInfo | undefined> {
  return node.inputs.map((name) => {
    if (name === '') return undefined
    const v = values.get(name)
    if (v === undefined) {
      throw new ModelFormatError(`node '${node.name}' (${node.opType}): input '${name}' is not produced by any node`)
    }
    return v
  })
}

function foldNatively(node: Node, result: OpResult, inputs: Array<ValueInfo | undefined>, fold: FoldFn): ValueInfo[] | undefined {
  if (result.kernel === undefined || !result.outputs.every((o) => allConcrete(o.dims))) return undefined
  const hosts = inputs.map((v) => (v === undefined ? undefined : hostTensor(v)))
  if (hosts.some((h, i) => h === undefined && inputs[i] !== undefined)) return undefined
  const call = result.kernel()
  const tensors = fold(node, call, hosts, result.outputs)
  return tensors.map((t) => constantInfo(t))
}

/** Infers every value of the graph from the given graph-input infos. */
export function inferGraph(graph: Graph, inputs: ReadonlyMap<string, ValueInfo>, options: InferOptions): InferredGraph {
  const values = new Map<string, ValueInfo>(inputs)
  const staticValues = new Set<string>()
  for (const [name, t] of graph.initializers) {
    if (!values.has(name)) {
      values.set(name, constantInfo(t))
      staticValues.add(name)
    }
  }
  const steps: Step[] = []
  const foldedNodes = new Set<string>()
  const dataDims: DataDim[] = []
  const dataDimOf = (node: Node): OpContext['dataDim'] => {
    if (options.concrete && options.dataDims === undefined) return undefined
    return (bound, known) => {
      const symbol = dataDimSymbol(node.name)
      const given = options.dataDims?.get(symbol)
      if (known !== undefined && given === undefined) return { dim: known, fromData: false }
      if (!dataDims.some((d) => d.symbol === symbol)) dataDims.push({ symbol, node: node.name, bound })
      return { dim: options.concrete ? (given ?? bound) : symbol, fromData: true }
    }
  }
  for (const node of graph.nodes) {
    const def = node.domain === '' ? opDef(node.opType) : options.internalOps?.get(`${node.domain}.${node.opType}`)
    if (def === undefined) {
      throw new UnsupportedOperatorError(node.name, node.domain ? `${node.domain}.${node.opType}` : node.opType, graph.opset)
    }
    const ins = nodeInputs(node, values)
    const isStatic = node.inputs.every((n) => n === '' || staticValues.has(n))
    let outs = isStatic ? options.foldCache?.get(node.name) : undefined
    let result: OpResult | undefined
    if (outs === undefined) {
      try {
        const ceiling = options.ceilingInputs?.get(node.name)
        const dataDim = dataDimOf(node)
        result = def.infer({ node, opset: graph.opset, inputs: ins, ...(ceiling === undefined ? {} : { ceiling }), ...(dataDim === undefined ? {} : { dataDim }) })
      } catch (err) {
        if (err instanceof ValueNeededError) err.valueName = node.inputs[err.inputIndex]
        throw err
      }
      if (result.outputs.length < node.outputs.filter((o) => o !== '').length) {
        throw new ModelFormatError(`node '${node.name}' (${node.opType}): has more outputs than the operator produces`)
      }
      const named = result.outputs.filter((_, i) => (node.outputs[i] ?? '') !== '')
      if (named.every((o) => o.values !== undefined || o.tensor !== undefined)) {
        outs = result.outputs.slice()
      } else if (result.aliasOf !== undefined) {
        const src = ins[result.aliasOf]
        const host = src === undefined ? undefined : hostTensor(src)
        if (host !== undefined && allConcrete(result.outputs[0]!.dims)) {
          outs = [constantInfo({ dtype: host.dtype, dims: result.outputs[0]!.dims as number[], data: host.data })]
        }
      } else if (options.fold !== undefined && (isStatic || mayFold(node, result, options))) {
        outs = foldNatively(node, result, ins, options.fold)
        if (outs !== undefined && !isStatic) foldedNodes.add(node.name)
      }
      if (outs !== undefined && isStatic) options.foldCache?.set(node.name, outs)
    }
    if (outs === undefined) {
      const r = result!
      const kernel = options.concrete && r.aliasOf === undefined ? buildKernel(node, r) : undefined
      steps.push({ node, inputs: ins, outputs: r.outputs, kernel, aliasOf: r.aliasOf })
      outs = r.outputs.slice()
    } else if (isStatic) {
      node.outputs.forEach((o) => staticValues.add(o))
    }
    node.outputs.forEach((name, i) => {
      if (name !== '' && outs![i] !== undefined) values.set(name, outs![i]!)
    })
  }
  return { values, steps, staticValues, foldedNodes, dataDims }
}

/** Whether a node that depends on the inputs' shapes may fold (maxFoldBytes, foldNodes). */
function mayFold(node: Node, r: OpResult, options: InferOptions): boolean {
  if (options.foldNodes !== undefined && !options.foldNodes.has(node.name)) return false
  return options.maxFoldBytes === undefined || outputBytes(r) <= options.maxFoldBytes
}

/** Bytes of an op's outputs (Infinity while any dim is symbolic). */
function outputBytes(r: OpResult): number {
  let n = 0
  for (const o of r.outputs) n += allConcrete(o.dims) ? valueBytes(o) : Infinity
  return n
}

function buildKernel(node: Node, r: OpResult): KernelCall {
  if (r.kernel === undefined) {
    throw new ModelFormatError(`node '${node.name}' (${node.opType}): the operator could not compute its outputs`)
  }
  return r.kernel()
}

/** The graph inputs a value is computed from (through any chain of nodes). */
export function graphInputAncestors(graph: Graph, value: string): string[] {
  const producer = new Map<string, Node>()
  for (const n of graph.nodes) for (const o of n.outputs) producer.set(o, n)
  const inputs = new Set(graph.inputs.map((d) => d.name))
  const found = new Set<string>()
  const seen = new Set<string>()
  const stack = [value]
  while (stack.length > 0) {
    const v = stack.pop()!
    if (seen.has(v)) continue
    seen.add(v)
    if (inputs.has(v)) found.add(v)
    for (const x of producer.get(v)?.inputs ?? []) if (x !== '') stack.push(x)
  }
  return [...found]
}

/**
 * The symbol of a node's data-dependent dim: 'count.' and the node's name with each character outside
 * [A-Za-z0-9] written as '_' and its code in hex (one-to-one, and dims.ts and dim-expr.ts read it as one
 * name): the same in every pass.
 */
export function dataDimSymbol(node: string): string {
  return `count.${node.replace(/[^A-Za-z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16)}_`)}`
}
