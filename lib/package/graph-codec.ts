// SPDX-License-Identifier: Apache-2.0
// The package's graph: the planned model (constants folded, activations fused, input dims fixed, or
// symbolic for a dim prepared for a range) as JSON in the manifest. Small constants travel inline
// (base64); large ones name the blobs that hold them, one blob per storage form (raw, packed GEMM
// panels, Winograd filter). decodePackageGraph checks every field, so a hand-edited or corrupt manifest
// is a PackageError, never a crash.
import { PackageError } from '../errors.js'
import { dtypeBytes, isDType, viewArray, type DType } from '../model/dtype.js'
import type { AttrValue, Graph, Node, TensorData, ValueDecl } from '../model/ir.js'
import { numel } from '../model/ir.js'

/** A large constant: dtype, dims, and the blob of each stored form ('raw', or a prepack key). */
export interface StoredConstant {
  readonly dtype: DType
  readonly dims: readonly number[]
  readonly forms: Readonly<Record<string, string>>
}

export interface PackageGraph {
  readonly graph: Graph
  /** Large constants by value name; their bytes stay in the package until loaded. */
  readonly stored: ReadonlyMap<string, StoredConstant>
}

export const graphCodecVersion = 1

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

function encodeNumber(v: number): Json {
  return Number.isFinite(v) ? v : { num: String(v) }
}

function encodeTensor(t: TensorData): Json {
  const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)
  return { dtype: t.dtype, dims: t.dims.slice(), b64: bytes.toString('base64') }
}

function encodeAttr(v: AttrValue): Json {
  if (typeof v === 'number') return encodeNumber(v)
  if (typeof v === 'string') return v
  if (Array.isArray(v)) return { list: (v as Array<number | string>).map((x) => (typeof x === 'number' ? encodeNumber(x) : x)) }
  return { tensor: encodeTensor(v as TensorData) }
}

/** The manifest JSON of a planned graph; `inline` are the small constants, `stored` the large ones. */
export function encodePackageGraph(graph: Graph, inline: ReadonlyMap<string, TensorData>, stored: ReadonlyMap<string, StoredConstant>): Json {
  const decl = (d: ValueDecl): Json => ({ name: d.name, dtype: d.dtype, dims: (d.dims ?? []) as Json[] })
  return {
    codec: graphCodecVersion,
    name: graph.name,
    opset: graph.opset,
    inputs: graph.inputs.map(decl),
    outputs: graph.outputs.map(decl),
    nodes: graph.nodes.map((n) => ({
      name: n.name,
      opType: n.opType,
      inputs: n.inputs.slice(),
      outputs: n.outputs.slice(),
      attrs: Object.fromEntries([...n.attrs].map(([k, v]) => [k, encodeAttr(v)])),
    })),
    inline: Object.fromEntries([...inline].map(([k, t]) => [k, encodeTensor(t)])),
    stored: Object.fromEntries([...stored].map(([k, s]) => [k, { dtype: s.dtype, dims: s.dims.slice(), forms: { ...s.forms } }])),
  }
}

class Reader {
  constructor(private readonly label: string) {}

  fail(message: string): never {
    throw new PackageError(`${this.label}: the manifest graph ${message}: the package is corrupt; re-run flexpipe prepare`)
  }

  object(v: unknown, what: string): Record<string, unknown> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(`${what} must be an object`)
    return v as Record<string, unknown>
  }

  array(v: unknown, what: string): unknown[] {
    if (!Array.isArray(v)) this.fail(`${what} must be an array`)
    return v as unknown[]
  }

  string(v: unknown, what: string): string {
    if (typeof v !== 'string') this.fail(`${what} must be a string`)
    return v as string
  }

  count(v: unknown, what: string): number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) this.fail(`${what} must be a non-negative integer`)
    return v as number
  }

  dtype(v: unknown, what: string): DType {
    if (!isDType(v)) this.fail(`${what} must be a dtype name`)
    return v as DType
  }

  dims(v: unknown, what: string): number[] {
    return this.array(v, what).map((d, i) => this.count(d, `${what}[${i}]`))
  }

  number(v: unknown, what: string): number {
    if (typeof v === 'number') return v
    const o = this.object(v, what)
    const n = Number(this.string(o.num, `${what}.num`))
    if (!Number.isNaN(n) || o.num === 'NaN') return n
    return this.fail(`${what} is not a number`)
  }

  tensor(v: unknown, what: string): TensorData {
    const o = this.object(v, what)
    const dtype = this.dtype(o.dtype, `${what}.dtype`)
    const dims = this.dims(o.dims, `${what}.dims`)
    const bytes = Buffer.from(this.string(o.b64, `${what}.b64`), 'base64')
    const n = numel(dims)
    if (bytes.length !== n * dtypeBytes(dtype)) this.fail(`${what} holds ${bytes.length} bytes, not ${n} ${dtype} elements`)
    const copy = new Uint8Array(bytes.length)
    copy.set(bytes)
    return { dtype, dims, data: viewArray(dtype, copy.buffer, 0, n) }
  }

  attr(v: unknown, what: string): AttrValue {
    if (typeof v === 'number' || typeof v === 'string') return v
    const o = this.object(v, what)
    if ('num' in o) return this.number(o, what)
    if ('list' in o) {
      const list = this.array(o.list, `${what}.list`)
      if (list.every((x) => typeof x === 'string')) return list as string[]
      return list.map((x, i) => this.number(x, `${what}.list[${i}]`))
    }
    if ('tensor' in o) return this.tensor(o.tensor, `${what}.tensor`)
    return this.fail(`${what} is not an attribute value`)
  }

  decl(v: unknown, what: string): ValueDecl {
    const o = this.object(v, what)
    // an input or output dim is a count, or a symbolic dim of a package prepared for a range (meta.dims)
    const dims = this.array(o.dims, `${what}.dims`).map((d, i) => (typeof d === 'string' && d !== '' ? d : this.count(d, `${what}.dims[${i}]`)))
    return { name: this.string(o.name, `${what}.name`), dtype: this.dtype(o.dtype, `${what}.dtype`), dims }
  }

  node(v: unknown, what: string): Node {
    const o = this.object(v, what)
    const strings = (x: unknown, w: string): string[] => this.array(x, w).map((s, i) => this.string(s, `${w}[${i}]`))
    const attrs = new Map<string, AttrValue>()
    for (const [k, a] of Object.entries(this.object(o.attrs, `${what}.attrs`))) attrs.set(k, this.attr(a, `${what}.attrs.${k}`))
    return {
      name: this.string(o.name, `${what}.name`),
      opType: this.string(o.opType, `${what}.opType`),
      domain: '',
      inputs: strings(o.inputs, `${what}.inputs`),
      outputs: strings(o.outputs, `${what}.outputs`),
      attrs,
    }
  }
}

/**
 * Decodes the manifest graph. Stored constants become external tensors of the package file at their
 * 'raw' blob (offset -1, length 0 when only transformed forms are stored: shape inference needs only
 * dtype and dims, and the planner reads the forms through `stored`).
 */
export function decodePackageGraph(json: unknown, packagePath: string, blobOffset: (name: string) => { offset: number; length: number } | undefined, label: string): PackageGraph {
  const r = new Reader(label)
  const o = r.object(json, 'graph')
  if (o.codec !== graphCodecVersion) r.fail(`codec ${String(o.codec)} is not ${graphCodecVersion}`)
  const initializers = new Map<string, Graph['initializers'] extends ReadonlyMap<string, infer T> ? T : never>()
  for (const [name, t] of Object.entries(r.object(o.inline, 'inline'))) initializers.set(name, r.tensor(t, `inline '${name}'`))
  const stored = new Map<string, StoredConstant>()
  for (const [name, v] of Object.entries(r.object(o.stored, 'stored'))) {
    const s = r.object(v, `stored '${name}'`)
    const dtype = r.dtype(s.dtype, `stored '${name}'.dtype`)
    const dims = r.dims(s.dims, `stored '${name}'.dims`)
    const forms: Record<string, string> = {}
    for (const [form, blob] of Object.entries(r.object(s.forms, `stored '${name}'.forms`))) {
      const b = r.string(blob, `stored '${name}'.forms.${form}`)
      if (blobOffset(b) === undefined) r.fail(`names blob '${b}' for '${name}', which the package does not have`)
      forms[form] = b
    }
    const raw = forms.raw === undefined ? undefined : blobOffset(forms.raw)
    const length = numel(dims) * dtypeBytes(dtype)
    if (raw !== undefined && raw.length !== length) r.fail(`raw blob of '${name}' has ${raw.length} bytes, not ${length}`)
    stored.set(name, { dtype, dims, forms })
    initializers.set(name, { dtype, dims, path: packagePath, offset: raw?.offset ?? -1, length: raw === undefined ? 0 : length })
  }
  const graph: Graph = {
    name: r.string(o.name, 'name'),
    opset: r.count(o.opset, 'opset'),
    nodes: r.array(o.nodes, 'nodes').map((n, i) => r.node(n, `nodes[${i}]`)),
    inputs: r.array(o.inputs, 'inputs').map((d, i) => r.decl(d, `inputs[${i}]`)),
    outputs: r.array(o.outputs, 'outputs').map((d, i) => r.decl(d, `outputs[${i}]`)),
    initializers,
  }
  return { graph, stored }
}
