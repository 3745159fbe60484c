// SPDX-License-Identifier: Apache-2.0
// Graph rewrite: a Conv whose output only a depthwise 3x3 Conv reads -- MobileNetV2's inverted-residual
// expansion (a pointwise 1x1) or its stem (a conv by rows over RGB), each with its activation fused or
// not -- absorbs the depthwise. The first Conv takes the depthwise's output, its weight and bias as
// inputs 3 and 4 and its attributes (prefixed `_dw.`, its fused activation included), and its kernel
// call becomes the native ConvDepthwise (native/runtime/conv_depthwise.h): both layers computed in bands
// of output rows, so the middle tensor, the largest activation of MobileNetV2 (96 x 112 x 112 floats,
// 4.8 MB), never exists whole. Like fuse-conv-pool.ts it slices the feature map across two layers, so a
// package prepared with `slicing: false` (the On-Demand baseline) does not fuse.
//
// Only middle tensors of at least two band buffers (1 MiB per image) fuse: a smaller one is about one
// band whole, so there is no memory to save, and one band per image would leave a second thread idle.
// In MobileNetV2 at 224 x 224 that is the stem's and the first three expansions' (at 112 x 112 and 56 x 56).
import type { AttrValue, Graph, Node, ValueInfo } from './ir.js'
import { PairFusions, soleReaders } from './fuse-pairs.js'
import { convRunsByRows, hasFusedPool } from './fuse-conv-pool.js'
import { fusedResidualAttr } from './fuse-residual.js'

/** Prefix of the depthwise attributes a fused Conv carries. */
export const fusedDepthwisePrefix = '_dw.'

/** Middle tensors (per image) from this many bytes up fuse: two of the native 512 KiB band buffers. */
export const fuseMinMiddleBytes = 1 << 20

/** Whether `conv` carries a depthwise Conv fused in by fuseConvDepthwise. */
export function hasFusedDepthwise(conv: Node): boolean {
  return conv.attrs.has(`${fusedDepthwisePrefix}group`)
}

/** The fused depthwise's attributes under their own names (for windowAttrs and fusedClamp). */
export function fusedDepthwiseAttrs(conv: Node): Map<string, AttrValue> {
  const attrs = new Map<string, AttrValue>()
  for (const [name, v] of conv.attrs) if (name.startsWith(fusedDepthwisePrefix)) attrs.set(name.slice(fusedDepthwisePrefix.length), v)
  return attrs
}

const ints = (v: AttrValue | undefined): number[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : undefined)
const allEqual = (v: number[] | undefined, want: number): boolean => v === undefined || v.every((x) => x === want)

/** A 1x1 Conv of stride 1 without padding or groups (native conv_depthwise_pointwise), on ONNX attributes. */
function pointwise(conv: Node, x: ValueInfo, w: ValueInfo, y: ValueInfo): boolean {
  if (x.dtype !== 'float32' || x.dims.length !== 4 || w.dims.length !== 4 || y.dims.length !== 4) return false
  const group = conv.attrs.get('group')
  if (group !== undefined && group !== 1) return false
  if (w.dims[2] !== 1 || w.dims[3] !== 1) return false
  if (!allEqual(ints(conv.attrs.get('strides')), 1) || !allEqual(ints(conv.attrs.get('dilations')), 1)) return false
  // A 1x1 window keeps the plane exactly when it has no padding.
  return x.dims[2] === y.dims[2] && x.dims[3] === y.dims[3]
}

/** A depthwise 3x3 over M channels the native kernel takes: 2-D, group M, stride 1 or 2 on both axes, no dilation. */
function depthwise3x3(conv: Node, w: ValueInfo, m: number): boolean {
  if (w.dims.length !== 4 || w.dims[0] !== m || w.dims[1] !== 1 || w.dims[2] !== 3 || w.dims[3] !== 3) return false
  if (conv.attrs.get('group') !== m) return false
  const kernel = ints(conv.attrs.get('kernel_shape'))
  if (kernel !== undefined && (kernel.length !== 2 || kernel.some((k) => k !== 3))) return false
  if (!allEqual(ints(conv.attrs.get('dilations')), 1)) return false
  const strides = ints(conv.attrs.get('strides')) ?? [1, 1]
  return strides.length === 2 && strides[0] === strides[1] && (strides[0] === 1 || strides[0] === 2)
}

const plainConv = (n: Node): boolean =>
  n.opType === 'Conv' && n.domain === '' && n.outputs.length === 1 && n.inputs.length <= 3 && !n.attrs.has(fusedResidualAttr) && !hasFusedPool(n) && !hasFusedDepthwise(n)

/**
 * Returns a graph where each Conv -> depthwise Conv pair (the first Conv pointwise or by rows, its
 * output read only by the depthwise and not a graph output, of at least `minMiddleBytes` per image;
 * neither with a fused residual or pool) is one Conv carrying the depthwise. `values` are the value
 * infos of an inference of `graph` (symbolic dims other than the batch leave a pair unfused).
 */
export function fuseConvDepthwise(graph: Graph, values: ReadonlyMap<string, ValueInfo>, minMiddleBytes = fuseMinMiddleBytes): Graph {
  const soleReader = soleReaders(graph)
  const pairs = new PairFusions()
  for (const n of graph.nodes) {
    if (!plainConv(n) || pairs.has(n)) continue
    const x = values.get(n.inputs[0]!)
    const w = values.get(n.inputs[1]!)
    const out = n.outputs[0]!
    const mid = values.get(out)
    if (x === undefined || w === undefined || mid === undefined || mid.dims.length !== 4) continue
    const [, m, mh, mw] = mid.dims
    if (typeof m !== 'number' || typeof mh !== 'number' || typeof mw !== 'number' || 4 * m * mh * mw < minMiddleBytes) continue
    if (!pointwise(n, x, w, mid) && !convRunsByRows(n, x, w)) continue
    const dw = soleReader(out)
    if (dw === undefined || !plainConv(dw) || dw.inputs[0] !== out || pairs.has(dw)) continue
    const w2 = values.get(dw.inputs[1]!)
    if (w2 === undefined || !depthwise3x3(dw, w2, m)) continue
    const attrs = new Map(n.attrs)
    for (const [name, v] of dw.attrs) attrs.set(`${fusedDepthwisePrefix}${name}`, v)
    const b1 = n.inputs[2] ?? ''
    const b2 = dw.inputs[2] ?? ''
    const inputs = [n.inputs[0]!, n.inputs[1]!, b1, dw.inputs[1]!, ...(b2 === '' ? [] : [b2])]
    pairs.fuse(n, dw, { ...n, inputs, outputs: [dw.outputs[0]!], attrs })
  }
  return pairs.apply(graph)
}
