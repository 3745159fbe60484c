// SPDX-License-Identifier: Apache-2.0
// Decodes ONNX TensorProto messages (initializers, Constant values, backend test data) into
// host tensors, or into references to external data files.
import { isAbsolute, join, normalize, relative } from 'node:path'
import type { onnx as OnnxTypes } from 'onnx-proto'
import { ModelFormatError, UnsupportedOperatorError } from '../errors.js'
import { allocArray, dtypeBytes, dtypeFromCode, type DType, type TypedArray } from './dtype.js'
import type { ExternalTensor, TensorData } from './ir.js'
import { numel } from './ir.js'
import { onnxSchema } from './onnx-schema.js'

export type TensorProto = OnnxTypes.ITensorProto

interface LongLike {
  low: number
  high: number
  unsigned?: boolean
}
type IntLike = number | LongLike

/** A protobuf int64 (number or Long) as a JS number (exact below 2^53). */
export function toNumber(x: IntLike | null | undefined): number {
  if (x === null || x === undefined) return 0
  if (typeof x === 'number') return x
  const hi = x.unsigned ? x.high >>> 0 : x.high
  return hi * 4294967296 + (x.low >>> 0)
}

function toBigInt(x: IntLike): bigint {
  if (typeof x === 'number') return BigInt(x)
  return BigInt.asIntN(64, (BigInt(x.high >>> 0) << 32n) | BigInt(x.low >>> 0))
}

function tensorDType(proto: TensorProto, what: string): DType {
  const code = proto.dataType ?? 0
  const dtype = dtypeFromCode(code)
  if (dtype === undefined) {
    const name = onnxSchema().TensorProto.DataType[code] ?? String(code)
    throw new UnsupportedOperatorError(what, 'Tensor', 0, `tensor data type ${name} is not supported`)
  }
  return dtype
}

/**
 * A tensor of raw bytes: checked now, its typed array made (an aligned copy) the first time `data` is
 * read. Large weights are usually never read on the host: the engine copies or transforms `bytes`
 * straight into its arena (lib/runtime/engine.ts), so the file's bytes are not copied twice.
 */
function rawTensor(raw: Uint8Array, dtype: DType, dims: number[], what: string): TensorData {
  const n = numel(dims)
  const want = n * dtypeBytes(dtype)
  if (raw.byteLength !== want) {
    throw new ModelFormatError(`tensor '${what}': raw data has ${raw.byteLength} bytes, its dims need ${want}`)
  }
  let data: TypedArray | undefined
  const t = { dtype, dims, bytes: raw } as { dtype: DType; dims: number[]; bytes: Uint8Array; data: TypedArray }
  Object.defineProperty(t, 'data', {
    enumerable: true,
    get: (): TypedArray => {
      if (data === undefined) {
        data = allocArray(dtype, n)
        new Uint8Array(data.buffer, data.byteOffset, want).set(raw)
      }
      return data
    },
  })
  return t
}

function fromFields(proto: TensorProto, dtype: DType, n: number, what: string): TypedArray {
  const out = allocArray(dtype, n)
  let src: ArrayLike<IntLike> | null | undefined
  switch (dtype) {
    case 'float32':
      src = proto.floatData
      break
    case 'float64':
      src = proto.doubleData
      break
    case 'int64':
      src = proto.int64Data
      break
    case 'uint64':
    case 'uint32':
      src = proto.uint64Data
      break
    default:
      src = proto.int32Data
  }
  const have = src?.length ?? 0
  if (have !== n) {
    throw new ModelFormatError(`tensor '${what}': has ${have} values, its dims need ${n}`)
  }
  if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
    for (let i = 0; i < n; i++) out[i] = toBigInt(src![i]!)
  } else {
    for (let i = 0; i < n; i++) out[i] = toNumber(src![i]!)
  }
  return out
}

function externalRef(proto: TensorProto, dtype: DType, dims: number[], baseDir: string, what: string): ExternalTensor {
  const entries = new Map((proto.externalData ?? []).map((e) => [e.key ?? '', e.value ?? '']))
  const location = entries.get('location')
  if (!location) throw new ModelFormatError(`tensor '${what}': external data without a location`)
  const path = normalize(join(baseDir, location))
  const rel = relative(baseDir, path)
  if (isAbsolute(location) || rel.startsWith('..')) {
    throw new ModelFormatError(`tensor '${what}': external data location '${location}' leaves the model's folder`)
  }
  const length = dtypeBytes(dtype) * numel(dims)
  const offset = Number(entries.get('offset') ?? '0')
  const declared = entries.has('length') ? Number(entries.get('length')) : length
  if (!Number.isSafeInteger(offset) || offset < 0 || declared !== length) {
    throw new ModelFormatError(
      `tensor '${what}': external data offset ${entries.get('offset')} / length ${declared} ` +
        `do not fit its dims (${length} bytes)`,
    )
  }
  return { dtype, dims, path, offset, length }
}

/** Decodes one TensorProto; baseDir resolves external data locations. */
export function decodeTensor(proto: TensorProto, baseDir: string, fallbackName = 'tensor'): TensorData | ExternalTensor {
  const what = proto.name || fallbackName
  const dtype = tensorDType(proto, what)
  const dims = (proto.dims ?? []).map((d) => toNumber(d as IntLike))
  if (dims.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new ModelFormatError(`tensor '${what}': invalid dims [${dims.join(', ')}]`)
  }
  const n = numel(dims)
  if (proto.dataLocation === onnxSchema().TensorProto.DataLocation.EXTERNAL) {
    return externalRef(proto, dtype, dims, baseDir, what)
  }
  if (proto.rawData && proto.rawData.byteLength > 0) return rawTensor(proto.rawData, dtype, dims, what)
  return { dtype, dims, data: fromFields(proto, dtype, n, what) }
}

/** Decodes a serialized TensorProto file (ONNX backend test data: input_0.pb ...). */
export function decodeTensorFile(bytes: Uint8Array, what: string): TensorData {
  let proto: TensorProto
  try {
    proto = onnxSchema().TensorProto.decode(bytes)
  } catch (err) {
    throw new ModelFormatError(`${what}: not a serialized ONNX TensorProto`, { cause: err })
  }
  const t = decodeTensor(proto, '.', what)
  if (!('data' in t)) throw new ModelFormatError(`${what}: external data is not supported here`)
  return t
}
