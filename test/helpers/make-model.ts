// SPDX-License-Identifier: Apache-2.0
// Builds small ONNX models in tests (with onnx-proto), for error paths and hand-made graphs.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import onnxProto from 'onnx-proto'
import { dtypeCode, type DType } from '../../lib/model/dtype.js'

const { onnx } = onnxProto

export interface ModelSpec {
  readonly opset?: number
  readonly inputs: ReadonlyArray<{ name: string; dtype: DType; dims: ReadonlyArray<number | string> }>
  readonly outputs: ReadonlyArray<{ name: string; dtype: DType; dims?: ReadonlyArray<number | string> }>
  readonly nodes: ReadonlyArray<{ op: string; inputs: string[]; outputs: string[]; domain?: string; name?: string; ints?: Record<string, number[]>; int?: Record<string, number>; tensor?: Record<string, { dims: number[]; floats: number[] }> }>
  /** float32 initializers (`floats`), or int64 ones (`int64s`). */
  readonly initializers?: ReadonlyArray<{ name: string; dims: number[]; floats?: number[]; int64s?: number[] }>
  /** Store the initializers as raw little-endian bytes (raw_data, as exporters do) instead of float_data. */
  readonly rawData?: boolean
}

function valueInfo(v: { name: string; dtype: DType; dims?: ReadonlyArray<number | string> }) {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: dtypeCode(v.dtype),
        shape: v.dims ? { dim: v.dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } : undefined,
      },
    },
  }
}

export function makeModel(spec: ModelSpec): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: spec.opset ?? 13 }],
    graph: {
      name: 'test',
      input: spec.inputs.map(valueInfo),
      output: spec.outputs.map(valueInfo),
      initializer: (spec.initializers ?? []).map((i) =>
        i.int64s !== undefined
          ? { name: i.name, dims: i.dims, dataType: 7, int64Data: i.int64s }
          : spec.rawData === true
            ? { name: i.name, dims: i.dims, dataType: 1, rawData: new Uint8Array(Float32Array.from(i.floats ?? []).buffer) }
            : { name: i.name, dims: i.dims, dataType: 1, floatData: i.floats ?? [] },
      ),
      node: spec.nodes.map((n, k) => ({
        name: n.name ?? `n${k}`,
        opType: n.op,
        domain: n.domain ?? '',
        input: n.inputs,
        output: n.outputs,
        attribute: [
          ...Object.entries(n.ints ?? {}).map(([name, ints]) => ({ name, ints, type: onnx.AttributeProto.AttributeType.INTS })),
          ...Object.entries(n.int ?? {}).map(([name, i]) => ({ name, i, type: onnx.AttributeProto.AttributeType.INT })),
          ...Object.entries(n.tensor ?? {}).map(([name, v]) => ({ name, t: { dims: v.dims, dataType: 1, floatData: v.floats }, type: onnx.AttributeProto.AttributeType.TENSOR })),
        ],
      })),
    },
  })
  return onnx.ModelProto.encode(model).finish()
}

/** Writes bytes to a fresh temporary file and returns its path. */
export function tempFile(name: string, bytes: Uint8Array | string): string {
  const dir = mkdtempSync(join(tmpdir(), 'flexpipe-test-'))
  const path = join(dir, name)
  writeFileSync(path, bytes)
  return path
}
