// SPDX-License-Identifier: Apache-2.0
// Requests to tensors and tensors to responses. Two request forms:
//   application/json           {"inputs": {"<name>": {"dims": [1, 3, 224, 224], "data": [...]}}}
//   application/octet-stream   the raw little-endian elements of a one-input model; dims from the
//                              x-dims header ("1,3,224,224") or the model's when they are all numbers
// Both are checked against the model's inputs here, the same way for either engine, so a bad request is
// a 400 naming what is wrong before it takes a place in the queue.
import { tensor, type DType, type Tensor } from 'flexpipe'
import type { InputSpec } from './backends.js'

export class BadRequest extends Error {
  override readonly name = 'BadRequest'
  constructor(
    message: string,
    readonly code = 'ERR_BAD_REQUEST',
  ) {
    super(message)
  }
}

function checkDims(spec: InputSpec, dims: unknown): number[] {
  if (!Array.isArray(dims) || dims.some((d) => !Number.isSafeInteger(d) || (d as number) < 0)) {
    throw new BadRequest(`input ${spec.name}: dims must be an array of non-negative integers, got ${JSON.stringify(dims)}`)
  }
  const want = spec.dims
  if (want !== undefined) {
    if (dims.length !== want.length) throw new BadRequest(`input ${spec.name}: expected ${want.length} dims [${want.join(', ')}], got [${dims.join(', ')}]`)
    want.forEach((w, i) => {
      if (typeof w === 'number' && w !== dims[i]) throw new BadRequest(`input ${spec.name}: dim ${i} must be ${w}, got ${dims[i]} (expected [${want.join(', ')}])`)
    })
  }
  return dims as number[]
}

function fromJsonData(spec: InputSpec, dims: number[], data: unknown): Tensor {
  if (!Array.isArray(data)) throw new BadRequest(`input ${spec.name}: data must be an array of numbers`)
  const n = dims.reduce((a, b) => a * b, 1)
  if (data.length !== n) throw new BadRequest(`input ${spec.name}: dims [${dims.join(', ')}] need ${n} elements, got ${data.length}`)
  if (data.some((v) => typeof v !== 'number' || !Number.isFinite(v))) throw new BadRequest(`input ${spec.name}: data must hold finite numbers only`)
  const t = tensor(spec.dtype, dims)
  const out = t.data
  if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
    for (let i = 0; i < n; i++) {
      const v = data[i] as number
      if (!Number.isSafeInteger(v)) throw new BadRequest(`input ${spec.name}: an ${spec.dtype} input takes integers, got ${v} at ${i}`)
      out[i] = BigInt(v)
    }
  } else if (spec.dtype === 'float16') {
    throw new BadRequest(`input ${spec.name}: send float16 inputs as application/octet-stream`)
  } else {
    out.set(data as number[])
  }
  return t
}

/** The feeds of a JSON body. */
export function decodeJson(inputs: readonly InputSpec[], body: unknown): Record<string, Tensor> {
  const given = (body as { inputs?: unknown } | null)?.inputs
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new BadRequest('body: expected {"inputs": {"<name>": {"dims": [...], "data": [...]}}}')
  const feeds: Record<string, Tensor> = {}
  for (const name of Object.keys(given)) {
    if (!inputs.some((s) => s.name === name)) throw new BadRequest(`unknown input ${JSON.stringify(name)}; the model's inputs are ${inputs.map((s) => s.name).join(', ')}`)
  }
  for (const spec of inputs) {
    const v = (given as Record<string, { dims?: unknown; data?: unknown } | undefined>)[spec.name]
    if (v === undefined) throw new BadRequest(`missing input ${spec.name}; the model's inputs are ${inputs.map((s) => s.name).join(', ')}`)
    feeds[spec.name] = fromJsonData(spec, checkDims(spec, v.dims), v.data)
  }
  return feeds
}

/** The feeds of a raw body: one input, dims from `dimsHeader` or the model. */
export function decodeRaw(inputs: readonly InputSpec[], body: Buffer, dimsHeader: string | undefined): Record<string, Tensor> {
  if (inputs.length !== 1) throw new BadRequest(`application/octet-stream serves one-input models; this one has ${inputs.length} inputs: send JSON`)
  const spec = inputs[0]!
  let dims: unknown
  if (dimsHeader !== undefined) dims = dimsHeader.split(',').map((s) => (/^\s*\d+\s*$/.test(s) ? Number(s) : Number.NaN))
  else if (spec.dims !== undefined && spec.dims.every((d) => typeof d === 'number')) dims = [...spec.dims]
  else throw new BadRequest(`input ${spec.name} has symbolic dims [${(spec.dims ?? []).join(', ')}]: give them in an x-dims header, e.g. x-dims: 1,3,224,224`)
  const d = checkDims(spec, dims)
  // checked before allocating: the dims are the client's
  const empty = tensor(spec.dtype, [0]).data
  const bytes = d.reduce((a, b) => a * b, empty.BYTES_PER_ELEMENT)
  if (body.byteLength !== bytes) throw new BadRequest(`input ${spec.name}: dims [${d.join(', ')}] of ${spec.dtype} need ${bytes} bytes, got ${body.byteLength}`)
  // the body's own bytes when they are aligned for the type (a body of more than 4 KB is a buffer of
  // its own, at offset 0), else a copy: the body lives until the response, after the inference
  if (body.byteOffset % empty.BYTES_PER_ELEMENT === 0) {
    const Typed = empty.constructor as new (b: ArrayBufferLike, offset: number, length: number) => typeof empty
    return { [spec.name]: tensor(spec.dtype, d, new Typed(body.buffer, body.byteOffset, bytes / empty.BYTES_PER_ELEMENT)) }
  }
  const t = tensor(spec.dtype, d)
  new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).set(body)
  return { [spec.name]: t }
}

/** Outputs as JSON: int64 values as numbers where they are safe, else strings. */
export function encodeOutputs(outputs: Record<string, Tensor>): Record<string, { dtype: DType; dims: readonly number[]; data: (number | string | boolean)[] }> {
  const out: Record<string, { dtype: DType; dims: readonly number[]; data: (number | string | boolean)[] }> = {}
  for (const [name, t] of Object.entries(outputs)) {
    const data: (number | string | boolean)[] = []
    for (const v of t.data as Iterable<number | bigint>) {
      if (typeof v === 'bigint') data.push(v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString())
      else data.push(v)
    }
    out[name] = { dtype: t.dtype, dims: t.dims, data }
  }
  return out
}
