// SPDX-License-Identifier: Apache-2.0
// All operator definitions by ONNX op type.
import { UnsupportedOperatorError } from '../../errors.js'
import type { Graph } from '../ir.js'
import type { OpDef } from './op-def.js'
import { eltwiseOps } from './eltwise.js'
import { nnOps } from './nn.js'
import { tensorOps } from './tensor.js'

const table = new Map<string, OpDef>()
for (const def of [...eltwiseOps, ...nnOps, ...tensorOps]) {
  if (table.has(def.opType)) throw new Error(`operator ${def.opType} is defined twice`)
  table.set(def.opType, def)
}

export function opDef(opType: string): OpDef | undefined {
  return table.get(opType)
}

export function supportedOpTypes(): string[] {
  return [...table.keys()].sort()
}

/** Every node must have an operator definition; the first that has none is reported. */
export function checkSupported(graph: Graph): void {
  for (const node of graph.nodes) {
    if (node.domain !== '' || opDef(node.opType) === undefined) {
      throw new UnsupportedOperatorError(node.name, node.domain ? `${node.domain}.${node.opType}` : node.opType, graph.opset)
    }
  }
}
