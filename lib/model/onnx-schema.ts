// SPDX-License-Identifier: Apache-2.0
// onnx-proto's generated message classes, loaded on first use. onnx-proto is CommonJS (330 kB of
// generated code): `require` loads it without the ESM loader's scan of its exports, and a process that
// never reads an ONNX file (a package, the CLI's help) never loads it (bench:zoo's cold start).
import { createRequire } from 'node:module'
import type { onnx as OnnxNamespace } from 'onnx-proto'

export type OnnxSchema = typeof OnnxNamespace

let schema: OnnxSchema | undefined

/** The `onnx` namespace of onnx-proto (ModelProto, TensorProto, ...). */
export function onnxSchema(): OnnxSchema {
  schema ??= (createRequire(import.meta.url)('onnx-proto') as { onnx: OnnxSchema }).onnx
  return schema
}
