// SPDX-License-Identifier: Apache-2.0
// Graph rewrite: a Conv whose only consumer is an Add of its output and another tensor R of the same
// shape (a residual connection: ResNet's bottleneck, MobileNetV2's inverted residual) absorbs the Add:
// the Conv gets R as a fourth input and the Add's output, and the kernel adds R in its epilogue, while
// the output tile is still in registers (native/runtime/conv_run.h). The tensor between the two and
// the Add's pass over it (read both, write a third) never exist; a Relu after the Add is then absorbed
// by fuseActivations as for any Conv, and applies after R is added (onnxruntime's Conv + Add + Relu
// fusion). Shapes decide: it runs on an inferred graph (symbolic dims are fine), and fuses only when
// R's dims equal the Conv output's, so a broadcasting Add (a per-channel constant, say) stays as it is.
import type { Graph, ValueInfo } from './ir.js'
import { PairFusions, soleReaders } from './fuse-pairs.js'
import { fusedMaxAttr, fusedMinAttr } from './fuse-activations.js'

/** Attribute marking a Conv whose fourth input is a residual added before its activation. */
export const fusedResidualAttr = '_fused_residual'

const sameDims = (a: ValueInfo | undefined, b: ValueInfo | undefined): boolean =>
  a !== undefined && b !== undefined && a.dtype === b.dtype && a.dims.length === b.dims.length && a.dims.every((d, i) => d === b.dims[i])

/**
 * Returns a graph where each Conv -> Add pair (the Conv's output used only by the Add, not a graph output;
 * the Add's other input of the same shape and dtype; the Conv without a fused activation of its own) is
 * one Conv. `values` are the value infos of an inference of `graph`.
 */
export function fuseResidualAdds(graph: Graph, values: ReadonlyMap<string, ValueInfo>): Graph {
  const soleReader = soleReaders(graph)
  const pairs = new PairFusions()
  const producedBefore = new Set<string>([...graph.inputs.map((i) => i.name), ...graph.initializers.keys()])
  for (const n of graph.nodes) {
    for (const o of n.outputs) producedBefore.add(o)
    if (n.opType !== 'Conv' || n.domain !== '' || n.outputs.length !== 1 || n.inputs.length > 3) continue
    if (n.attrs.has(fusedMinAttr) || n.attrs.has(fusedMaxAttr)) continue // its clamp would come before the Add
    const out = n.outputs[0]!
    const add = soleReader(out)
    if (add === undefined || add.opType !== 'Add' || add.domain !== '' || add.inputs.length !== 2 || add.outputs.length !== 1) continue
    const residual = add.inputs[0] === out ? add.inputs[1]! : add.inputs[1] === out ? add.inputs[0]! : undefined
    if (residual === undefined || residual === out || residual === '') continue
    // R must exist when the Conv runs (the Add's other input may come from a node between the two)
    if (!producedBefore.has(residual)) continue
    if (!sameDims(values.get(out), values.get(residual)) || !sameDims(values.get(add.outputs[0]!), values.get(out))) continue
    const inputs = [n.inputs[0]!, n.inputs[1]!, n.inputs[2] ?? '', residual]
    pairs.fuse(n, add, { ...n, inputs, outputs: add.outputs.slice(0, 1), attrs: new Map([...n.attrs, [fusedResidualAttr, 1]]) })
  }
  return pairs.apply(graph)
}
