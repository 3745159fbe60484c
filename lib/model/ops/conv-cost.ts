// SPDX-License-Identifier: Apache-2.0
// Cost of each convolution algorithm: workspace bytes, FLOPs and (transformed) weight bytes. A line-by-line
// mirror of native/runtime/conv_cost.cc (formulas documented there), so the memory planner can trade
// latency for memory per layer without the addon; test/kernels/conv-cost.test.ts checks it against the
// native numbers on random shapes for every ISA.

export type ConvKernel = 'direct' | 'im2col' | 'gemm1x1' | 'winograd63' | 'winograd23' | 'depthwise' | 'narrow' | 'winograd63_lean' | 'winograd23_lean' | 'grouped' | 'taps'

/** The Winograd kernels; the lean ones read the narrow GEMM's raw-sized panels and transform each at run time. */
export type WinogradKernel = 'winograd63' | 'winograd23' | 'winograd63_lean' | 'winograd23_lean'
export const isWinograd = (k: ConvKernel): k is WinogradKernel =>
  k === 'winograd63' || k === 'winograd23' || k === 'winograd63_lean' || k === 'winograd23_lean'
/** The lean kernel of a Winograd kernel (same tiles, the raw-sized weight form). */
export const leanWinograd = (k: 'winograd63' | 'winograd23'): WinogradKernel => (k === 'winograd63' ? 'winograd63_lean' : 'winograd23_lean')

/** Native ConvAlgo codes (runtime/conv_cost.h), the `algo` int of the Conv op. */
export const convAlgoCode: Readonly<Record<ConvKernel, number>> = {
  direct: 0,
  im2col: 1,
  gemm1x1: 2,
  winograd63: 3,
  winograd23: 4,
  depthwise: 5,
  narrow: 6,
  winograd63_lean: 7,
  winograd23_lean: 8,
  grouped: 9,
  taps: 10,
}

/** A convolution in the native 3-D form: 1-D and 2-D shapes have leading unit axes (kernel 1, no pad). */
export interface ConvShape {
  readonly batch: number
  readonly inChannels: number
  readonly outChannels: number
  readonly group: number
  readonly in: readonly [number, number, number]
  readonly out: readonly [number, number, number]
  readonly kernel: readonly [number, number, number]
  readonly stride: readonly [number, number, number]
  readonly dilation: readonly [number, number, number]
  /** Padding before each axis (the end padding is implied by `out`). */
  readonly pad: readonly [number, number, number]
}

/** The GEMM blocking of one ISA (GemmKernels: micro-tile mr x nr, blocks mc x kc). */
export interface GemmBlocking {
  readonly mr: number
  readonly nr: number
  readonly mc: number
  readonly kc: number
  /** B panels (nr columns each) one micro-kernel call may span (default 1; AVX-512's 8x32: 2). */
  readonly tilePanels?: number
}

export interface ConvCostOptions {
  /** Threads the workspace is sized for (default 1). */
  readonly threads?: number
  /** The ISA's GEMM blocking; default: an upper bound over every ISA. */
  readonly gemm?: GemmBlocking
}

export interface ConvCost {
  readonly workspaceBytes: number
  readonly flops: number
  /** The weight as the kernel reads it (transformed for Winograd). */
  readonly weightBytes: number
}

const ceilDiv = (a: number, b: number): number => Math.ceil(a / b)
const roundUp = (a: number, b: number): number => ceilDiv(a, b) * b
const align64 = (bytes: number): number => roundUp(bytes, 64)

/** A 1x1x1 convolution with stride 1 and no padding: gemm1x1 and narrow read its input as B in place. */
function readsInputInPlace(s: ConvShape): boolean {
  return [0, 1, 2].every((i) => s.kernel[i] === 1 && s.stride[i] === 1 && s.pad[i] === 0 && s.in[i] === s.out[i])
}

/** Whether `kernel` computes `s` (the rules of conv_algo_applies). */
export function convApplies(kernel: ConvKernel, s: ConvShape): boolean {
  const planar3x3 = s.in[0] === 1 && s.out[0] === 1 && s.kernel[0] === 1 && s.kernel[1] === 3 && s.kernel[2] === 3 &&
    s.dilation[1] === 1 && s.dilation[2] === 1
  switch (kernel) {
    case 'direct':
    case 'im2col':
      return true
    case 'gemm1x1':
      return readsInputInPlace(s)
    case 'narrow':
      return s.group === 1
    case 'winograd63':
    case 'winograd23':
    case 'winograd63_lean':
    case 'winograd23_lean':
      return planar3x3 && s.group === 1 && s.stride[1] === 1 && s.stride[2] === 1
    case 'depthwise': // any kh x kw and equal dilations (native depthwise_kxk unless 3x3 undilated)
      return s.in[0] === 1 && s.out[0] === 1 && s.kernel[0] === 1 && s.dilation[1] === s.dilation[2] &&
        s.group === s.inChannels && s.group === s.outChannels && s.stride[1] === s.stride[2] &&
        (s.stride[1] === 1 || s.stride[1] === 2)
    case 'grouped': // 2-D, group > 1, equal strides (1 or 2) and dilations (native kernels/grouped/grouped.h)
      return s.in[0] === 1 && s.out[0] === 1 && s.kernel[0] === 1 && s.group > 1 && s.dilation[1] === s.dilation[2] &&
        s.stride[1] === s.stride[2] && (s.stride[1] === 1 || s.stride[1] === 2)
    case 'taps': // 2-D, group 1 (native runtime/conv_taps.h)
      return s.in[0] === 1 && s.out[0] === 1 && s.kernel[0] === 1 && s.group === 1
  }
}

/** The outputs [o0, o1) of one axis whose tap k reads inside the input (native conv_tap_span). */
function tapSpan(inLen: number, outLen: number, stride: number, dilation: number, pad: number, k: number): [number, number] {
  const off = k * dilation - pad
  const hi = Math.min(outLen, inLen - 1 - off < 0 ? 0 : Math.floor((inLen - 1 - off) / stride) + 1)
  const lo = Math.min(hi, off >= 0 ? 0 : Math.ceil(-off / stride))
  return [lo, hi]
}

/**
 * The taps algorithm's work (native conv_taps_geometry): tap-pixels computed (each tap over the output
 * rectangle that reads inside the input), the largest rectangle copied, and whether a tap multiplies the
 * input plane in place (whole rows, stride 1, equal widths, column offset 0).
 */
export function tapsGeometry(s: ConvShape): { tapPixels: number; copiedMax: number; inPlace: boolean } {
  let tapPixels = 0
  let copiedMax = 0
  let inPlace = false
  for (let ky = 0; ky < s.kernel[1]; ky++) {
    for (let kx = 0; kx < s.kernel[2]; kx++) {
      const [oy0, oy1] = tapSpan(s.in[1], s.out[1], s.stride[1], s.dilation[1], s.pad[1], ky)
      const [ox0, ox1] = tapSpan(s.in[2], s.out[2], s.stride[2], s.dilation[2], s.pad[2], kx)
      const r = (oy1 - oy0) * (ox1 - ox0)
      if (r === 0) continue
      tapPixels += r
      if (s.stride[1] === 1 && s.stride[2] === 1 && s.in[2] === s.out[2] && ox0 === 0 && ox1 === s.out[2] && kx * s.dilation[2] === s.pad[2]) inPlace = true
      else copiedMax = Math.max(copiedMax, r)
    }
  }
  return { tapPixels, copiedMax, inPlace }
}

/** native/kernels/grouped/grouped.h's scratch target (floats of a band's input rows) and least items per image. */
const GROUPED_SCRATCH_TARGET = 16384
const GROUPED_MIN_ITEMS = 8

/**
 * The grouped kernel's work and scratch (grouped_geometry): output rows per band, bands per (image,
 * group), and one thread's scratch floats (the taps' offset table, the band's zero-padded input rows
 * of one group and one row for the stride-2 copy), columns sized for 16 lanes.
 */
export function groupedGeometry(s: ConvShape): { bandRows: number; bands: number; scratchFloats: number } {
  const [kh, kw, d, stride] = [s.kernel[1], s.kernel[2], s.dilation[1], s.stride[1]]
  const cg = s.inChannels / s.group
  const [oh, ow] = [s.out[1], s.out[2]]
  const spanH = (kh - 1) * d + 1
  const spanW = (kw - 1) * d + 1
  const widest = Math.max(ow, 16) - 1
  const copied = s.pad[2] + s.in[2]
  const cols = stride === 1
    ? roundUp(Math.max(widest + spanW, copied), 16)
    : 2 * roundUp(Math.max(widest + Math.floor((spanW - 1) / 2) + 1, ceilDiv(copied, 2)), 16)
  const fit = Math.floor(GROUPED_SCRATCH_TARGET / (cg * cols))
  let rows = fit > spanH ? Math.floor((fit - spanH) / stride) + 1 : 1
  if (s.group < GROUPED_MIN_ITEMS) rows = Math.min(rows, ceilDiv(oh, Math.min(oh, ceilDiv(GROUPED_MIN_ITEMS, s.group))))
  rows = Math.max(1, Math.min(rows, oh))
  const inRows = (rows - 1) * stride + spanH
  const offsetFloats = roundUp(2 * cg * kh * kw, 16) // the taps' offsets, int64
  return { bandRows: rows, bands: ceilDiv(oh, rows), scratchFloats: offsetFloats + (cg * inRows + 1) * cols }
}

export interface WinogradGeometry {
  readonly alpha: number
  readonly m: number
  readonly tiles: number
  readonly block: number
  readonly vFloats: number
  readonly mwFloats: number
}

/** Tiles, tile block and buffer sizes of Winograd F(6,3) / F(2,3) (winograd_geometry). */
export function winogradGeometry(kernel: WinogradKernel, s: ConvShape, slices: number): WinogradGeometry {
  const alpha = kernel === 'winograd63' || kernel === 'winograd63_lean' ? 8 : 4
  const m = alpha - 2
  const a2 = alpha * alpha
  const tiles = s.batch * ceilDiv(s.out[1], m) * ceilDiv(s.out[2], m)
  const block = Math.max(1, Math.min(Math.floor(2304 / a2), ceilDiv(tiles, Math.max(1, slices))))
  return { alpha, m, tiles, block, vFloats: block * a2 * roundUp(s.inChannels, 8), mwFloats: block * a2 * 16 }
}

/** Output pixels per slice of im2col / gemm1x1 (im2col_geometry). */
export function slicePixels(s: ConvShape, slices: number): number {
  return ceilDiv(s.out[0] * s.out[1] * s.out[2], Math.max(1, slices))
}

/** Phases of one axis some kernel tap uses (taps d k, k < kernel, modulo the stride). */
function usedPhases(kernel: number, stride: number, dilation: number): number {
  const used = new Set<number>()
  for (let k = 0; k < kernel; k++) used.add((dilation * k) % stride)
  return used.size
}

/**
 * How the narrow conv reads B (narrow_geometry, runtime/conv_narrow.h): the input in place (1x1), the
 * slice's padded phase planes (2-D, strides <= 8) or its im2col columns; B's floats per slice and the
 * GEMM columns of the widest slice (phase planes compute Wq - OW dropped columns per output row).
 */
export function narrowGeometry(s: ConvShape, slices: number): { b: 'in-place' | 'phases' | 'columns'; bFloats: number; maxCols: number } {
  const sp = slicePixels(s, slices)
  const k = s.inChannels * s.kernel[0] * s.kernel[1] * s.kernel[2]
  if (readsInputInPlace(s)) return { b: 'in-place', bFloats: 0, maxCols: sp }
  const planar = s.in[0] === 1 && s.out[0] === 1 && s.kernel[0] === 1
  if (!planar || s.stride[1] > 8 || s.stride[2] > 8) return { b: 'columns', bFloats: k * sp, maxCols: sp }
  const [oh, ow] = [s.out[1], s.out[2]]
  const wq = ow + Math.floor((s.dilation[2] * (s.kernel[2] - 1)) / s.stride[2])
  const outRows = Math.min(oh, Math.floor((sp - 1) / ow) + 2)
  const rows = outRows + Math.floor((s.dilation[1] * (s.kernel[1] - 1)) / s.stride[1])
  const phases = usedPhases(s.kernel[1], s.stride[1], s.dilation[1]) * usedPhases(s.kernel[2], s.stride[2], s.dilation[2])
  return { b: 'phases', bFloats: s.inChannels * phases * rows * wq, maxCols: (outRows - 1) * wq + ow }
}

/** gemm_narrow.h's narrow_ldt (floats per column of the Cᵀ tile) and narrow_max_cols. */
const NARROW_LDT = 32
const NARROW_MAX_COLS = 256

/** gemm_driver.cc's short_k, copy_min_row_groups and a_alias_floats. */
const SHORT_K = 64
const COPY_MIN_ROW_GROUPS = 4
const A_ALIAS_FLOATS = 1024

/**
 * gemm_workspace_bytes of one slice's product (rows x cols x k), exact for `g`, else the bound over
 * the ISAs (nr <= 16, mr x nr <= 256, 4 <= mr <= 16, mc <= 144, kc <= 768 on one panel or kc <= 256
 * on two). Convolutions ask for
 * their weights (A) to be read in place, rows `aRowStride` floats apart (contiguous along k; undefined:
 * ConvTranspose's columns, always in place): no thread packs an A block unless that stride is a
 * multiple of 4 KiB (a_rows_alias). A 1x1 convolution also reads its input (B) in place, with rows
 * `bRowStride` floats apart: it needs one packed column group, and a per-thread copy of the k-block
 * of the panels one tile spans when k > 64 and there are at least 4 row groups (copies_b_panels).
 */
function gemmWorkspace(rows: number, cols: number, k: number, aRowStride: number | undefined, bRowStride: number | undefined, threads: number, g?: GemmBlocking): number {
  const nr = g?.nr ?? 16
  const tile = g === undefined ? 256 : g.mr * g.nr
  const bInPlace = bRowStride !== undefined
  const b = bInPlace ? align64(Math.min(cols, nr) > 0 ? k * nr * 4 : 0) : 0
  const copies = bInPlace && k > SHORT_K && ceilDiv(rows, g?.mr ?? 4) >= COPY_MIN_ROW_GROUPS
  const kc = g === undefined ? Math.min(k, 768) : ceilDiv(k, Math.max(1, ceilDiv(k, g.kc)))
  const copyFloats = g === undefined ? nr * Math.max(kc, 2 * Math.min(k, 256)) : kc * nr * (g.tilePanels ?? 1)
  const copy = copies ? align64(copyFloats * 4) : 0
  const packsA = aRowStride !== undefined && aRowStride % A_ALIAS_FLOATS === 0
  const mc = g === undefined ? Math.min(rows + 15, 144) : Math.min(roundUp(rows, g.mr), g.mc)
  const aBlock = packsA ? align64(4 * Math.max(1, mc * kc)) : 0
  return 64 + b + threads * (aBlock + align64(tile * 4) + copy)
}

function workspaceBytes(kernel: ConvKernel, s: ConvShape, slices: number, threads: number, g?: GemmBlocking): number {
  const k = (s.inChannels / s.group) * s.kernel[0] * s.kernel[1] * s.kernel[2]
  switch (kernel) {
    case 'direct':
    case 'depthwise':
      return 0
    case 'grouped':
      return 64 + threads * align64(4 * groupedGeometry(s).scratchFloats)
    case 'taps': {
      // conv_taps_workspace_bytes: the copied rectangle's B and T, and the GEMM (in place, or on B)
      const t = tapsGeometry(s)
      const m = s.outChannels
      const c = s.inChannels
      let gemm = t.inPlace ? gemmWorkspace(m, s.out[1] * s.out[2], c, c, s.in[1] * s.in[2], threads, g) : 0
      if (t.copiedMax > 0) gemm = Math.max(gemm, gemmWorkspace(m, t.copiedMax, c, c, t.copiedMax, threads, g))
      return 64 + align64(4 * c * t.copiedMax) + align64(4 * m * t.copiedMax) + gemm
    }
    case 'im2col': {
      const sp = slicePixels(s, slices)
      const cols = g === undefined ? sp + 15 : roundUp(sp, g.nr)
      return 64 + 4 * k * cols + gemmWorkspace(s.outChannels / s.group, sp, k, k, undefined, threads, g)
    }
    case 'gemm1x1':
      return gemmWorkspace(s.outChannels / s.group, slicePixels(s, slices), k, k, s.out[0] * s.out[1] * s.out[2], threads, g)
    case 'narrow': {
      // runtime/conv_narrow.h: the row offsets, B (phase planes or columns; none in place), then
      // gemm_narrow_workspace_bytes: 64 + one Cᵀ tile (32 floats by <= 256 columns) per thread.
      const n = narrowGeometry(s, slices)
      return 64 + align64(8 * k) + align64(4 * n.bFloats) + 64 + threads * align64(4 * NARROW_LDT * Math.min(n.maxCols, NARROW_MAX_COLS))
    }
    case 'winograd63':
    case 'winograd23':
    case 'winograd63_lean':
    case 'winograd23_lean': {
      const w = winogradGeometry(kernel, s, slices)
      // the lean kernels: each thread's transformed panel, a² x C x 16 floats
      const panel = kernel.endsWith('_lean') ? w.alpha * w.alpha * s.inChannels * 16 : 0
      return 64 + 4 * (roundUp(w.vFloats, 16) + threads * w.mwFloats + threads * panel)
    }
  }
}

/** Workspace, FLOPs and weight bytes of `kernel` on `s` with `slices` input slices (conv_cost). */
export function convCost(kernel: ConvKernel, s: ConvShape, slices: number, options: ConvCostOptions = {}): ConvCost {
  const threads = Math.max(1, options.threads ?? 1)
  const pixels = s.out[0] * s.out[1] * s.out[2]
  const k = (s.inChannels / s.group) * s.kernel[0] * s.kernel[1] * s.kernel[2]
  const workspace = workspaceBytes(kernel, s, slices, threads, options.gemm)
  if (kernel === 'taps') return { workspaceBytes: workspace, flops: 2 * s.batch * s.outChannels * s.inChannels * tapsGeometry(s).tapPixels, weightBytes: 4 * s.outChannels * k }
  if (!isWinograd(kernel)) {
    // narrow's weight is its 16-channel panels (conv_narrow_filter), the last one zero-padded
    const rows = kernel === 'narrow' ? roundUp(s.outChannels, 16) : s.outChannels
    return { workspaceBytes: workspace, flops: 2 * s.batch * s.outChannels * k * pixels, weightBytes: 4 * rows * k }
  }
  const w = winogradGeometry(kernel, s, slices)
  const f63 = w.alpha === 8
  const [bt, at] = f63 ? [44, 38] : [8, 6]
  const inT = 2 * w.alpha * 2 * bt
  const outT = (w.alpha + w.m) * 2 * at
  const a2 = w.alpha * w.alpha
  const flops = w.tiles * (2 * a2 * s.inChannels * s.outChannels + inT * s.inChannels + outT * s.outChannels)
  if (kernel.endsWith('_lean')) {
    // + the filter transform, per tile block, of every (output channel rounded up to 16, input channel)
    const filter = ceilDiv(w.tiles, w.block) * (3 + w.alpha) * (f63 ? 19 : 6) * roundUp(s.outChannels, 16) * s.inChannels
    return { workspaceBytes: workspace, flops: flops + filter, weightBytes: 4 * roundUp(s.outChannels, 16) * s.inChannels * 9 }
  }
  return { workspaceBytes: workspace, flops, weightBytes: 4 * a2 * ceilDiv(s.outChannels, 16) * s.inChannels * 16 }
}

/**
 * ConvTranspose's bands (native/runtime/conv_transpose.h): input rows (in[0] x in[1] lines of in[2]
 * pixels) cut into `slices` bands, rows per band rounded up; the column buffer has one row per
 * (output channel of a group, kernel tap).
 */
export function convTransposeBands(s: ConvShape, slices: number): { bandPixels: number; colRows: number } {
  const rows = s.in[0] * s.in[1]
  const n = Math.max(1, Math.min(slices, rows))
  return { bandPixels: ceilDiv(rows, n) * s.in[2], colRows: (s.outChannels / s.group) * s.kernel[0] * s.kernel[1] * s.kernel[2] }
}

/**
 * Workspace of ConvTranspose's GEMM algorithm (conv_transpose_workspace_bytes): 64 bytes of
 * alignment slack, the column buffer of one band, and the band's GEMM (weights and input read in
 * place, the input's rows a plane apart), exact for `g`, else the bound over the ISAs.
 */
export function convTransposeWorkspaceBytes(s: ConvShape, slices: number, threads: number, g?: GemmBlocking): number {
  const { bandPixels, colRows } = convTransposeBands(s, slices)
  const plane = s.in[0] * s.in[1] * s.in[2]
  return 64 + align64(4 * colRows * bandPixels) + gemmWorkspace(colRows, bandPixels, s.inChannels / s.group, undefined, plane, threads, g)
}

/** Bands whose column buffer stays within 2 MiB (at least one input row each). */
export function defaultConvTransposeSlices(s: ConvShape): number {
  const { colRows } = convTransposeBands(s, 1)
  const rowsPerBand = Math.max(1, Math.floor((2 << 20) / (4 * colRows * s.in[2])))
  return Math.max(1, ceilDiv(s.in[0] * s.in[1], rowsPerBand))
}

/** The max pool a ConvMaxPool computes over its conv's output (2-D: row and column axes). */
export interface FusedPoolShape {
  readonly kernel: readonly number[]
  readonly strides: readonly number[]
  readonly dilations: readonly number[]
  readonly padBegin: readonly number[]
  /** The pool's output dims [POH, POW]. */
  readonly out: readonly number[]
}

/** native/runtime/conv_pool.cc's and conv_depthwise.cc's band target (bytes of one band buffer). */
const BAND_BUFFER_TARGET = 512 * 1024

/**
 * The bands of a ConvMaxPool (native/runtime/conv_pool.cc conv_pool_bands): pool rows per band, their
 * count, and at most how many conv rows and input rows one band reads.
 */
export function convPoolBands(s: ConvShape, p: FusedPoolShape): { poolRows: number; bands: number; convRows: number; inRows: number } {
  const extent = (p.kernel[0]! - 1) * p.dilations[0]! + 1
  const oh = s.out[1]
  const target = Math.max(extent, Math.floor(BAND_BUFFER_TARGET / Math.max(1, 4 * s.outChannels * s.out[2])))
  const per = Math.max(1, Math.floor((target - extent) / p.strides[0]!) + 1)
  let bands = ceilDiv(p.out[0]!, per)
  if (bands > 1 && bands % 2 === 1) bands++
  const poolRows = ceilDiv(p.out[0]!, bands)
  bands = ceilDiv(p.out[0]!, poolRows)
  const convRows = Math.min(oh, (poolRows - 1) * p.strides[0]! + extent)
  const inRows = Math.min(s.in[1], (convRows - 1) * s.stride[1] + s.kernel[1])
  return { poolRows, bands, convRows, inRows }
}

/**
 * Workspace of a ConvMaxPool for `threads` threads (native conv_pool_workspace_bytes): per thread the
 * im2col-by-rows ring (C x KH x sw phase rows of round8(round8(OW) + (KW - 1) / sw) floats), the band's
 * input rows and its conv rows.
 */
export function convPoolWorkspaceBytes(s: ConvShape, p: FusedPoolShape, threads: number): number {
  const b = convPoolBands(s, p)
  const sw = s.stride[2]
  const panel = roundUp(roundUp(s.out[2], 8) + Math.floor((s.kernel[2] - 1) / sw), 8)
  const ring = align64(4 * s.inChannels * s.kernel[1] * sw * panel)
  const input = align64(4 * s.inChannels * b.inRows * s.in[2])
  const band = align64(4 * s.outChannels * b.convRows * s.out[2])
  return 64 + Math.max(1, threads) * (ring + input + band)
}

/** The depthwise 3x3 a ConvDepthwise computes over its first conv's output (stride 1 or 2 on both axes). */
export interface FusedDepthwiseShape {
  readonly stride: number
  readonly padBegin: readonly number[]
  /** The depthwise's output dims [OH, OW]. */
  readonly out: readonly number[]
}

/** Whether a ConvDepthwise's first conv is its pointwise form (native conv_depthwise_pointwise). */
export function convDepthwisePointwise(s: ConvShape): boolean {
  return s.group === 1 && convApplies('gemm1x1', s)
}

/**
 * The bands of a ConvDepthwise (native/runtime/conv_depthwise.cc conv_depthwise_bands): depthwise
 * output rows per band, their count, and at most how many middle rows and input rows one band reads.
 */
export function convDepthwiseBands(s: ConvShape, d: FusedDepthwiseShape): { outRows: number; bands: number; midRows: number; inRows: number } {
  const extent = 3
  const target = Math.max(extent, Math.floor(BAND_BUFFER_TARGET / Math.max(1, 4 * s.outChannels * s.out[2])))
  const per = Math.max(1, Math.floor((target - extent) / d.stride) + 1)
  let bands = ceilDiv(d.out[0]!, per)
  if (bands > 1 && bands % 2 === 1) bands++
  const outRows = ceilDiv(d.out[0]!, bands)
  bands = ceilDiv(d.out[0]!, outRows)
  const midRows = Math.min(s.out[1], (outRows - 1) * d.stride + extent)
  const inRows = Math.min(s.in[1], (midRows - 1) * s.stride[1] + s.kernel[1])
  return { outRows, bands, midRows, inRows }
}

/**
 * Workspace of a ConvDepthwise for `threads` threads (native conv_depthwise_workspace_bytes): per thread
 * the pointwise GEMM's one-thread workspace over a band's columns (its weights and input read in
 * place) or, for a first conv by rows, its ring and the band's input rows; then the band's middle rows.
 * Exact but for the GEMM part, the bound over the ISAs.
 */
export function convDepthwiseWorkspaceBytes(s: ConvShape, d: FusedDepthwiseShape, threads: number): number {
  const b = convDepthwiseBands(s, d)
  let first: number
  if (convDepthwisePointwise(s)) {
    first = align64(gemmWorkspace(s.outChannels, b.midRows * s.out[2], s.inChannels, s.inChannels, s.in[1] * s.in[2], 1))
  } else {
    const sw = s.stride[2]
    const panel = roundUp(roundUp(s.out[2], 8) + Math.floor((s.kernel[2] - 1) / sw), 8)
    first = align64(4 * s.inChannels * s.kernel[1] * sw * panel) + align64(4 * s.inChannels * b.inRows * s.in[2])
  }
  const band = align64(4 * s.outChannels * b.midRows * s.out[2])
  return 64 + Math.max(1, threads) * (first + band)
}
