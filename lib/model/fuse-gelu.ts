// SPDX-License-Identifier: Apache-2.0
// Graph rewrite: GELU as exporters write it out of elementwise nodes becomes one Gelu node (the native
// Unary functions 'gelu' / 'gelu_tanh'): one pass over x instead of five to eight, and none of the
// intermediate tensors exists. PyTorch's exact GELU (ConvNeXt, ViT, Swin, BERT):
//     y = Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)
// and the tanh approximation (GPT-2's gelu_new):
//     y = Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), 0.044715)), sqrt(2 / pi))), 1))
// Matched up to operand order, Div(x, c) or Mul(x, 1 / c), Pow(x, 3) or Mul(Mul(x, x), x), and any
// grouping of the outer product 0.5 * x * (1 + f). Every intermediate value must have exactly one
// consumer and not be a graph output; x may have others. Constants match within 1e-6 relative.
import { constantNodeValues, scalarOf } from './graph-constants.js'
import { valueConsumers, type AttrValue, type Graph, type Node, type TensorData } from './ir.js'

interface Ctx {
  readonly graph: Graph
  readonly constants: ReadonlyMap<string, TensorData>
  readonly consumers: ReadonlyMap<string, Node[]>
  readonly producer: ReadonlyMap<string, Node>
  readonly outputs: ReadonlySet<string>
}

const near = (v: number | undefined, want: number): boolean => v !== undefined && Math.abs(v - want) <= 1e-6 * Math.abs(want)

/** n when it is a default-domain node of this type with `inputs` inputs and one output. */
function op(n: Node | undefined, opType: string, inputs = 2): Node | undefined {
  return n !== undefined && n.opType === opType && n.domain === '' && n.inputs.length === inputs && n.outputs.length === 1 ? n : undefined
}

/** A value consumed once, by a node that is not its graph output. */
function single(c: Ctx, value: string): Node | undefined {
  const users = c.consumers.get(value) ?? []
  return users.length === 1 && !c.outputs.has(value) ? users[0] : undefined
}

/** For a binary node with a constant scalar operand: [the other operand, the scalar]. */
function withScalar(c: Ctx, n: Node): [string, number] | undefined {
  const [a, b] = n.inputs as [string, string]
  const sb = scalarOf(c.graph, c.constants, b)
  if (sb !== undefined) return [a, sb]
  const sa = scalarOf(c.graph, c.constants, a)
  return sa === undefined ? undefined : [b, sa]
}

/** The other operand of a binary node, given one of them. */
function other(n: Node, one: string): string | undefined {
  const [a, b] = n.inputs
  return a === one ? b : b === one ? a : undefined
}

/** x of x / sqrt 2 (Div or Mul by 1 / sqrt 2) producing `value`, with the nodes it took. */
function erfArgument(c: Ctx, value: string): { x: string; nodes: Node[] } | undefined {
  const p = c.producer.get(value)
  const n = op(p, 'Div') ?? op(p, 'Mul')
  if (n === undefined) return undefined
  if (n.opType === 'Div') {
    const s = scalarOf(c.graph, c.constants, n.inputs[1]!)
    return near(s, Math.SQRT2) ? { x: n.inputs[0]!, nodes: [n] } : undefined
  }
  const m = withScalar(c, n)
  return m !== undefined && near(m[1], Math.SQRT1_2) ? { x: m[0], nodes: [n] } : undefined
}

/** x of x^3: Pow(x, 3) or Mul(Mul(x, x), x) in either order. */
function cube(c: Ctx, value: string): { x: string; nodes: Node[] } | undefined {
  const pow = op(c.producer.get(value), 'Pow')
  if (pow !== undefined) return near(scalarOf(c.graph, c.constants, pow.inputs[1]!), 3) ? { x: pow.inputs[0]!, nodes: [pow] } : undefined
  const n = op(c.producer.get(value), 'Mul')
  if (n === undefined) return undefined
  for (const [sq, x] of [[n.inputs[0]!, n.inputs[1]!], [n.inputs[1]!, n.inputs[0]!]] as const) {
    const m = op(c.producer.get(sq), 'Mul')
    if (m !== undefined && m.inputs[0] === x && m.inputs[1] === x && single(c, sq) === n) return { x, nodes: [m, n] }
  }
  return undefined
}

/** x of sqrt(2 / pi) * (x + 0.044715 x^3) producing `value`. */
function tanhArgument(c: Ctx, value: string): { x: string; nodes: Node[] } | undefined {
  const scale = op(c.producer.get(value), 'Mul')
  if (scale === undefined) return undefined
  const s = withScalar(c, scale)
  if (s === undefined || !near(s[1], Math.sqrt(2 / Math.PI)) || single(c, s[0]) !== scale) return undefined
  const sum = op(c.producer.get(s[0]), 'Add')
  if (sum === undefined) return undefined
  for (const [x, t] of [[sum.inputs[0]!, sum.inputs[1]!], [sum.inputs[1]!, sum.inputs[0]!]] as const) {
    const k = op(c.producer.get(t), 'Mul')
    if (k === undefined || single(c, t) !== sum) continue
    const ks = withScalar(c, k)
    if (ks === undefined || !near(ks[1], 0.044715) || single(c, ks[0]) !== k) continue
    const cu = cube(c, ks[0])
    if (cu !== undefined && cu.x === x) return { x, nodes: [...cu.nodes, k, sum, scale] }
  }
  return undefined
}

/**
 * From the Erf or Tanh node f: x, the nodes from x's first use to the last Mul, and that Mul, when
 * the nodes compute 0.5 * x * (1 + f(arg(x))).
 */
function matchGelu(c: Ctx, f: Node): { x: string; nodes: Node[]; last: Node; tanh: boolean } | undefined {
  const tanh = f.opType === 'Tanh'
  const arg = tanh ? tanhArgument(c, f.inputs[0]!) : erfArgument(c, f.inputs[0]!)
  if (arg === undefined || single(c, f.inputs[0]!) !== f) return undefined
  const x = arg.x
  const plus = op(single(c, f.outputs[0]!), 'Add')
  if (plus === undefined) return undefined
  const one = withScalar(c, plus)
  if (one === undefined || one[0] !== f.outputs[0] || !near(one[1], 1)) return undefined
  const e = plus.outputs[0]! // 1 + f
  const m1 = op(single(c, e), 'Mul')
  if (m1 === undefined) return undefined
  const head = [...arg.nodes, f, plus, m1]
  const o = other(m1, e)!
  if (o === x) {
    // (x * e) * 0.5
    const m2 = op(single(c, m1.outputs[0]!), 'Mul')
    if (m2 === undefined) return undefined
    const h = withScalar(c, m2)
    return h !== undefined && h[0] === m1.outputs[0] && near(h[1], 0.5) ? { x, nodes: [...head, m2], last: m2, tanh } : undefined
  }
  if (near(scalarOf(c.graph, c.constants, o), 0.5)) {
    // x * (e * 0.5)
    const m2 = op(single(c, m1.outputs[0]!), 'Mul')
    if (m2 === undefined || other(m2, m1.outputs[0]!) !== x) return undefined
    return { x, nodes: [...head, m2], last: m2, tanh }
  }
  // (x * 0.5) * e
  const half = op(c.producer.get(o), 'Mul')
  if (half === undefined || single(c, o) !== m1) return undefined
  const h = withScalar(c, half)
  return h !== undefined && h[0] === x && near(h[1], 0.5) ? { x, nodes: [half, ...head], last: m1, tanh } : undefined
}

/** Returns a graph where each elementwise GELU is one Gelu node. */
export function fuseGelu(graph: Graph): Graph {
  const producer = new Map<string, Node>()
  for (const n of graph.nodes) for (const o of n.outputs) producer.set(o, n)
  const c: Ctx = { graph, constants: constantNodeValues(graph), consumers: valueConsumers(graph), producer, outputs: new Set(graph.outputs.map((o) => o.name)) }
  const absorbed = new Set<Node>()
  const replaced = new Map<Node, Node>()
  for (const n of graph.nodes) {
    if (op(n, 'Erf', 1) === undefined && op(n, 'Tanh', 1) === undefined) continue
    const m = matchGelu(c, n)
    if (m === undefined || m.nodes.some((k) => absorbed.has(k))) continue
    const attrs = new Map<string, AttrValue>([['approximate', m.tanh ? 'tanh' : 'none']])
    replaced.set(m.last, { name: n.name, opType: 'Gelu', domain: '', inputs: [m.x], outputs: m.last.outputs, attrs })
    for (const k of m.nodes) if (k !== m.last) absorbed.add(k)
  }
  if (absorbed.size === 0) return graph
  return { ...graph, nodes: graph.nodes.filter((n) => !absorbed.has(n)).map((n) => replaced.get(n) ?? n) }
}
