// SPDX-License-Identifier: Apache-2.0
// Resize (opsets 10-19) and Upsample (7-9): scales/sizes/roi folded at plan time, one native Resize.
import { attrFloat, attrFloats, attrInt, attrInts, attrString } from '../attrs.js'
import { isConcrete } from '../dims.js'
import { isExternal, type Dim, type ValueInfo } from '../ir.js'
import { info, type OpContext, type OpDef, type OpResult } from './op-def.js'
import { input, shapeError, unsupported, valueNeeded } from './op-util.js'

const modes = ['nearest', 'linear', 'cubic']
const coordModes = [
  'half_pixel',
  'asymmetric',
  'pytorch_half_pixel',
  'tf_half_pixel_for_nn',
  'align_corners',
  'tf_crop_and_resize',
  'half_pixel_symmetric',
]
const nearestModes = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil', 'simple']

/** Threads the workspace is sized for (the plan does not know the session's thread count). */
const maxKernelThreads = 8

/**
 * Workspace of the specialised nearest/linear paths for output dims `out` (resize_fast_workspace_bytes in
 * native/runtime/resize_run.cc): 64 alignment bytes, per-axis tap tables for the last two axes (nearest: one
 * int32 per output index, linear: two int32 indices and two float weights), and for linear two rows of
 * out_w floats per thread. 0 for cubic, which has no specialised path.
 */
export function resizeWorkspaceBytes(mode: number, out: readonly number[]): number {
  if (mode === 2 || out.length === 0) return 0
  const w = out[out.length - 1]!
  const h = out.length >= 2 ? out[out.length - 2]! : 1
  return 64 + (mode === 0 ? 4 * (w + h) : 16 * (w + h) + 8 * w * maxKernelThreads)
}

/** Contents of a present input as numbers: known values or a host constant; undefined if absent. */
function constNumbers(ctx: OpContext, i: number, what: string): number[] | undefined {
  const v = ctx.inputs[i]
  if (v === undefined) return undefined
  if (v.values !== undefined && v.values.every(isConcrete)) return v.values as number[]
  if (v.tensor !== undefined && !isExternal(v.tensor)) {
    return Array.from(v.tensor.data as ArrayLike<number | bigint>, (e) => Number(e))
  }
  if (v.dims.length === 1 && v.dims[0] === 0) return []
  throw valueNeeded(ctx, i, what)
}

interface ResizeSpec {
  readonly mode: number
  readonly coord: number
  readonly nearest: number
  readonly excludeOutside: boolean
  readonly cubicA: number
  readonly extrapolation: number
  /** Full-rank scales (the coordinate transform uses them whenever given). */
  readonly scales?: readonly number[]
  /** Full-rank output sizes; when absent they are floor(in * scale). */
  readonly sizes?: readonly Dim[]
  /** Full-rank roi: starts then ends. */
  readonly roi: readonly number[]
}

function codeOf(ctx: OpContext, table: readonly string[], name: string, value: string): number {
  const i = table.indexOf(value)
  if (i < 0) throw unsupported(ctx, `${name} = ${value}`)
  return i
}

/** Output dim for one axis: sizes win; scales give floor(in * scale). */
function outDim(d: Dim, spec: ResizeSpec, i: number): Dim {
  const size = spec.sizes?.[i]
  if (size !== undefined) return size
  const s = spec.scales?.[i] ?? 1
  if (s === 1) return d
  if (isConcrete(d)) return Math.floor(d * s)
  return `floor(${d}*${s})`
}

/** The native call of a resolved resize of X. */
function resizeResult(ctx: OpContext, x: ValueInfo, spec: ResizeSpec): OpResult {
  if (x.dtype !== 'float32') throw unsupported(ctx, `dtype ${x.dtype} (only float32)`)
  const rank = x.dims.length
  if (rank < 1) throw shapeError(ctx, 'Resize needs an input of rank >= 1')
  const out = x.dims.map((d, i) => outDim(d, spec, i))
  return {
    outputs: [info(x.dtype, out)],
    kernel: () => {
      const floats = [spec.cubicA, spec.extrapolation]
      for (let i = 0; i < rank; i++) {
        const inLen = x.dims[i] as number
        const outLen = out[i] as number
        const scale = spec.scales !== undefined ? spec.scales[i] ?? 1 : inLen > 0 ? outLen / inLen : 1
        const lengthResized = spec.scales !== undefined ? inLen * scale : outLen
        floats.push(scale, lengthResized, spec.roi[i] ?? 0, spec.roi[rank + i] ?? 1)
      }
      const workspace = resizeWorkspaceBytes(spec.mode, out as number[])
      return {
        op: 'Resize',
        inputs: [0],
        ints: [rank, spec.mode, spec.coord, spec.nearest, spec.excludeOutside ? 1 : 0],
        floats,
        ...(workspace > 0 ? { workspace } : {}),
      }
    },
  }
}

/** Expands per-axis values given for `axes` (opset 18) to full rank, `fill(i)` elsewhere. */
function expand<T extends Dim>(values: readonly T[], axes: readonly number[], fill: (i: number) => T,
  rank: number): T[] {
  const full = Array.from({ length: rank }, (_, i) => fill(i))
  axes.forEach((a, j) => {
    full[a] = values[j] ?? full[a]!
  })
  return full
}

/** Scales or sizes of Resize-11+ (inputs roi 1, scales 2, sizes 3), with axes and keep_aspect_ratio_policy. */
function resizeTargets(ctx: OpContext, x: ValueInfo, spec: { roi: number[] }): { scales?: number[]; sizes?: Dim[] } {
  const rank = x.dims.length
  const axesAttr = attrInts(ctx.node, 'axes')
  const axes = (axesAttr ?? [...Array(rank).keys()]).map((a) => (a < 0 ? a + rank : a))
  if (axes.some((a) => a < 0 || a >= rank)) throw shapeError(ctx, `axes [${axesAttr}] out of range for rank ${rank}`)
  const roi = constNumbers(ctx, 1, 'roi') ?? []
  if (roi.length === 2 * axes.length) {
    const starts = expand(roi.slice(0, axes.length), axes, () => 0, rank)
    spec.roi = [...starts, ...expand(roi.slice(axes.length), axes, () => 1, rank)]
  }
  const scales = constNumbers(ctx, 2, 'scales') ?? []
  const sizes = constNumbers(ctx, 3, 'sizes') ?? []
  if (scales.length > 0 && sizes.length > 0) throw shapeError(ctx, 'only one of scales and sizes may be given')
  if (scales.length > 0) {
    if (scales.length !== axes.length) {
      throw shapeError(ctx, `scales has ${scales.length} entries, expected ${axes.length}`)
    }
    if (scales.some((s) => !(s > 0))) throw shapeError(ctx, `scales [${scales}] must be positive`)
    return { scales: expand(scales, axes, () => 1, rank) }
  }
  if (sizes.length !== axes.length) throw shapeError(ctx, `sizes has ${sizes.length} entries, expected ${axes.length}`)
  const policy = attrString(ctx.node, 'keep_aspect_ratio_policy', 'stretch')
  if (policy === 'stretch') return { sizes: expand<Dim>(sizes, axes, (i) => x.dims[i]!, rank) }
  if (policy !== 'not_larger' && policy !== 'not_smaller') {
    throw unsupported(ctx, `keep_aspect_ratio_policy = ${policy}`)
  }
  if (!axes.every((a) => isConcrete(x.dims[a]!))) throw unsupported(ctx, 'keep_aspect_ratio_policy with symbolic dims')
  const ratios = axes.map((a, j) => (sizes[j] ?? 1) / (x.dims[a] as number))
  const s = policy === 'not_larger' ? Math.min(...ratios) : Math.max(...ratios)
  // One scale for every listed axis; their sizes are round(scale * in), other axes keep theirs.
  const scaled = axes.map((a) => Math.round(s * (x.dims[a] as number)))
  return {
    scales: expand(axes.map(() => s), axes, () => 1, rank),
    sizes: expand<Dim>(scaled, axes, (i) => x.dims[i]!, rank),
  }
}

const resize: OpDef = {
  opType: 'Resize',
  infer(ctx) {
    const x = input(ctx, 0)
    const node = ctx.node
    if (attrInt(node, 'antialias', 0) !== 0) throw unsupported(ctx, 'antialias = 1')
    const mode = codeOf(ctx, modes, 'mode', attrString(node, 'mode', 'nearest'))
    if (ctx.opset < 11) {
      const scales = constNumbers(ctx, 1, 'scales')
      if (scales === undefined || scales.length !== x.dims.length) {
        throw shapeError(ctx, 'scales must have one entry per axis')
      }
      if (mode === 2) throw unsupported(ctx, 'mode = cubic before opset 11')
      return resizeResult(ctx, x, {
        mode, coord: 1, nearest: 4, excludeOutside: false, cubicA: -0.75, extrapolation: 0, scales, roi: [],
      })
    }
    const coordName = attrString(node, 'coordinate_transformation_mode', 'half_pixel')
    const spec = { roi: [] as number[] }
    const targets = resizeTargets(ctx, x, spec)
    return resizeResult(ctx, x, {
      mode,
      coord: codeOf(ctx, coordModes, 'coordinate_transformation_mode', coordName),
      nearest: codeOf(ctx, nearestModes, 'nearest_mode', attrString(node, 'nearest_mode', 'round_prefer_floor')),
      excludeOutside: attrInt(node, 'exclude_outside', 0) !== 0,
      cubicA: attrFloat(node, 'cubic_coeff_a', -0.75),
      extrapolation: attrFloat(node, 'extrapolation_value', 0),
      ...targets,
      roi: spec.roi,
    })
  },
}

const upsample: OpDef = {
  opType: 'Upsample',
  infer(ctx) {
    const x = input(ctx, 0)
    const modeName = attrString(ctx.node, 'mode', 'nearest')
    const linear = modeName === 'linear' || modeName === 'bilinear' || modeName === 'trilinear'
    if (modeName !== 'nearest' && !linear) throw unsupported(ctx, `mode = ${modeName}`)
    const mode = linear ? 1 : 0
    const scales = ctx.opset >= 9 ? constNumbers(ctx, 1, 'scales') : attrFloats(ctx.node, 'scales')
    if (scales === undefined || scales.length !== x.dims.length) {
      throw shapeError(ctx, 'scales must have one entry per axis')
    }
    return resizeResult(ctx, x, {
      mode, coord: 1, nearest: 4, excludeOutside: false, cubicA: -0.75, extrapolation: 0, scales, roi: [],
    })
  },
}

export const resizeOps: OpDef[] = [resize, upsample]
