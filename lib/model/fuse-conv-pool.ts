// SPDX-License-Identifier: Apache-2.0
// Graph rewrite: a network stem -- a Conv over at most 4 input channels that runs by rows (its
// activation fused or not) -- whose only consumer is a 2-D MaxPool absorbs the pool. The Conv node
// takes the pool's output and its window attributes (prefixed `_pool.`), and its kernel call becomes the
// native ConvMaxPool (native/runtime/conv_pool.h): both layers computed in bands of pool rows, so the
// stem's output, the largest activation of SqueezeNet and ResNet (64 x 111 x 111 and 64 x 112 x 112,
// 3.2 MB), never exists whole. FlexNN slices one layer's input; this slices the feature map across
// two, which is why a package prepared with `slicing: false` (the On-Demand baseline) does not fuse.
// Shapes decide, as in fuse-residual.ts: it runs on an inferred graph.
import type { AttrValue, Graph, Node, ValueInfo } from './ir.js'
import { PairFusions, soleReaders } from './fuse-pairs.js'
import { fusedResidualAttr } from './fuse-residual.js'

/** Prefix of the pool attributes a fused Conv carries. */
export const fusedPoolPrefix = '_pool.'

const poolAttrNames = ['kernel_shape', 'strides', 'pads', 'dilations', 'auto_pad', 'ceil_mode'] as const

/** Whether `conv` carries a MaxPool fused in by fuseConvPools. */
export function hasFusedPool(conv: Node): boolean {
  return conv.attrs.has(`${fusedPoolPrefix}kernel_shape`)
}

/** The fused pool's attributes under their ONNX names (for windowAttrs). */
export function fusedPoolAttrs(conv: Node): Map<string, AttrValue> {
  const attrs = new Map<string, AttrValue>()
  for (const name of poolAttrNames) {
    const v = conv.attrs.get(`${fusedPoolPrefix}${name}`)
    if (v !== undefined) attrs.set(name, v)
  }
  return attrs
}

const ints = (v: AttrValue | undefined): number[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : undefined)

/** native/kernels/conv_stem/conv_stem_rows.h stem_applies, on ONNX attributes (2-D only). */
export function convRunsByRows(conv: Node, x: ValueInfo, w: ValueInfo): boolean {
  if (x.dtype !== 'float32' || x.dims.length !== 4 || w.dims.length !== 4) return false
  const c = x.dims[1]
  if (typeof c !== 'number' || c > 4 || w.dims[1] !== c) return false // groups 1
  const group = conv.attrs.get('group')
  if (group !== undefined && group !== 1) return false
  const kernel = (ints(conv.attrs.get('kernel_shape')) ?? w.dims.slice(2)) as Array<number | string>
  if (!kernel.every((k) => typeof k === 'number' && k >= 1 && k <= 16)) return false
  const dilations = ints(conv.attrs.get('dilations'))
  if (dilations !== undefined && dilations.some((d) => d !== 1)) return false
  const strides = ints(conv.attrs.get('strides'))
  return strides === undefined || (strides[1] ?? 1) <= 4
}

/**
 * Returns a graph where each stem Conv -> MaxPool pair (the Conv's output used only by the pool and not
 * a graph output; the Conv by rows, without a fused residual; the pool 2-D, float32, without Indices)
 * is one Conv carrying the pool. `values` are the value infos of an inference of `graph`.
 */
export function fuseConvPools(graph: Graph, values: ReadonlyMap<string, ValueInfo>): Graph {
  const soleReader = soleReaders(graph)
  const pairs = new PairFusions()
  for (const n of graph.nodes) {
    if (n.opType !== 'Conv' || n.domain !== '' || n.outputs.length !== 1 || n.inputs.length > 3) continue
    if (n.attrs.has(fusedResidualAttr) || hasFusedPool(n)) continue
    const x = values.get(n.inputs[0]!)
    const w = values.get(n.inputs[1]!)
    if (x === undefined || w === undefined || !convRunsByRows(n, x, w)) continue
    const out = n.outputs[0]!
    const pool = soleReader(out)
    if (pool === undefined || pool.opType !== 'MaxPool' || pool.domain !== '' || pool.inputs[0] !== out) continue
    if (pool.outputs.length > 1 && pool.outputs.slice(1).some((o) => o !== '')) continue // Indices wanted
    const kernel = ints(pool.attrs.get('kernel_shape'))
    if (kernel === undefined || kernel.length !== 2) continue
    const attrs = new Map(n.attrs)
    for (const name of poolAttrNames) {
      const v = pool.attrs.get(name)
      if (v !== undefined) attrs.set(`${fusedPoolPrefix}${name}`, v)
    }
    pairs.fuse(n, pool, { ...n, outputs: [pool.outputs[0]!], attrs })
  }
  return pairs.apply(graph)
}
