// SPDX-License-Identifier: Apache-2.0
// ONNX import: a ModelProto (protobuf, decoded by onnx-proto) becomes the graph IR.
import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import type { onnx as OnnxTypes } from 'onnx-proto'
import { FlexpipeError, IOError, ModelFormatError, UnsupportedOperatorError } from '../errors.js'
import { dtypeFromCode } from './dtype.js'
import type { AttrValue, Dim, ExternalTensor, Graph, Node, TensorData, ValueDecl } from './ir.js'
import { onnxSchema } from './onnx-schema.js'
import { decodeTensor, toNumber } from './tensor-proto.js'
import { sortNodes } from './topo-sort.js'


/** Opsets of the default domain this importer accepts (the shape functions know their differences). */
export const minOpset = 7
export const maxOpset = 21

const utf8 = new TextDecoder()

function decodeAttr(a: OnnxTypes.IAttributeProto, baseDir: string, node: string): AttrValue {
  const AttrType = onnxSchema().AttributeProto.AttributeType
  switch (a.type) {
    case AttrType.INT:
      return toNumber(a.i)
    case AttrType.FLOAT:
      return a.f ?? 0
    case AttrType.STRING:
      return utf8.decode(a.s ?? new Uint8Array())
    case AttrType.INTS:
      return (a.ints ?? []).map((x) => toNumber(x))
    case AttrType.FLOATS:
      return (a.floats ?? []).slice()
    case AttrType.STRINGS:
      return (a.strings ?? []).map((s) => utf8.decode(s))
    case AttrType.TENSOR: {
      const t = decodeTensor(a.t ?? {}, baseDir, `${node}.${a.name}`)
      if (!('data' in t)) throw new ModelFormatError(`node '${node}': attribute ${a.name} uses external data`)
      // An aligned copy, not a view of the (possibly mapped) model file: nodes live as long as the engine,
      // and one view would keep the whole mapping, as large as the model, resident.
      return { dtype: t.dtype, dims: t.dims, data: t.data }
    }
    default:
      // Graphs (If/Loop/Scan bodies) and sparse tensors: kept as a marker; those ops are unsupported.
      return `<unsupported attribute type ${a.type}>`
  }
}

function decodeValueDecl(v: OnnxTypes.IValueInfoProto, index: number): ValueDecl {
  const name = v.name ?? ''
  const tt = v.type?.tensorType
  if (!tt) throw new ModelFormatError(`value '${name}': only tensor-typed graph inputs and outputs are supported`)
  const dtype = dtypeFromCode(tt.elemType ?? 0)
  if (dtype === undefined) {
    throw new UnsupportedOperatorError(name, 'Input', 0, `element type ${tt.elemType} is not supported`)
  }
  const dims: Dim[] | undefined = tt.shape
    ? (tt.shape.dim ?? []).map((d, i): Dim => {
        if (d.dimParam) return d.dimParam
        if (d.dimValue !== null && d.dimValue !== undefined) {
          const n = toNumber(d.dimValue)
          if (n > 0 || (n === 0 && d.dimValue !== undefined)) return n
        }
        return `${name}_dim${i}_${index}`
      })
    : undefined
  return { name, dtype, dims }
}

function defaultOpset(model: OnnxTypes.IModelProto): number {
  const entry = (model.opsetImport ?? []).find((o) => !o.domain || o.domain === 'ai.onnx')
  return entry ? toNumber(entry.version) : 0
}

/** Parses ONNX bytes. baseDir resolves external data files. */
export function parseOnnx(bytes: Uint8Array, baseDir: string, what = 'model'): Graph {
  let model: OnnxTypes.ModelProto
  try {
    model = onnxSchema().ModelProto.decode(bytes)
  } catch (err) {
    throw new ModelFormatError(`${what}: not an ONNX model, or the file is truncated (${(err as Error).message})`, {
      cause: err,
    })
  }
  const g = model.graph
  if (!g || !model.irVersion || (g.node ?? []).length === 0) {
    throw new ModelFormatError(`${what}: not an ONNX model (no graph, IR version or nodes)`)
  }
  const opset = defaultOpset(model)
  if (opset < minOpset || opset > maxOpset) {
    throw new UnsupportedOperatorError(what, 'opset', opset, `default-domain opset ${opset} is outside ${minOpset}..${maxOpset}`)
  }
  const initializers = new Map<string, TensorData | ExternalTensor>()
  for (const [i, t] of (g.initializer ?? []).entries()) {
    initializers.set(t.name ?? `initializer_${i}`, decodeTensor(t, baseDir, `initializer ${i}`))
  }
  const nodes: Node[] = (g.node ?? []).map((n, i) => {
    const name = n.name || `${n.opType ?? 'node'}_${i}`
    const attrs = new Map<string, AttrValue>()
    for (const a of n.attribute ?? []) attrs.set(a.name ?? '', decodeAttr(a, baseDir, name))
    return {
      name,
      opType: n.opType ?? '',
      domain: n.domain === 'ai.onnx' ? '' : (n.domain ?? ''),
      inputs: (n.input ?? []).slice(),
      outputs: (n.output ?? []).slice(),
      attrs,
    }
  })
  const inputs = (g.input ?? []).filter((v) => !initializers.has(v.name ?? '')).map(decodeValueDecl)
  const outputs = (g.output ?? []).map(decodeValueDecl)
  return {
    name: g.name ?? 'graph',
    opset,
    nodes: sortNodes(nodes, [...inputs.map((v) => v.name), ...initializers.keys()], what),
    inputs,
    outputs,
    initializers,
  }
}

/** Reads and parses an ONNX file; `read` gives its bytes (default: readFile; the engine maps the file). */
export async function loadOnnx(path: string, read: (path: string) => Uint8Array | Promise<Uint8Array> = readFile): Promise<Graph> {
  const abs = resolve(path)
  let bytes: Uint8Array
  try {
    bytes = await read(abs)
  } catch (err) {
    if (err instanceof FlexpipeError) throw err // e.g. the addon that maps the file did not load
    throw new IOError(`failed to read model ${abs}: ${(err as Error).message}`, { cause: err })
  }
  return parseOnnx(bytes, dirname(abs), abs)
}
