// SPDX-License-Identifier: Apache-2.0
// Bottleneck-aware layer slicing (FlexNN): per layer, the kernel and the weight/input slice counts that
// make the layer's own footprint fit a per-layer limit, preferring latency.
//
// A layer's footprint at its step is
//     live activations + whole weights it reads unsliced + one weight slice (+ O_DIRECT slack) + workspace
// and the choice follows the seed's order: try the kernel options in latency order (Winograd first, then
// im2col + GEMM, then direct); for each, the default input slices with the FEWEST weight slices that fit
// (every weight slice is read from storage, so more slices cost IO and scheduling), then the MOST input
// slices under the platform threshold (input slices are recomputed, not loaded, so they cost little)
// with the fewest weight slices. Slice boundaries fall on multiples of the option's channel unit (16 for
// Winograd panels, the GEMM's packed-panel width, 8 for raw convolution weights: SIMD-friendly widths).
// Pure: the same layers and limit always give the same choices.

/** A layer's weight in one kernel's storage form, splittable along output channels. */
export interface SliceableWeight {
  /** Bytes of the whole weight in this form. */
  readonly bytes: number
  /** Output channels (columns) it covers. */
  readonly channels: number
  /** Slice boundaries are multiples of this many channels. */
  readonly unit: number
  /** Bytes per unit of channels (the last unit may be partial but is stored whole). */
  readonly unitBytes: number
}

export interface KernelOption {
  /** Kernel name, e.g. 'winograd63', 'im2col', 'direct', 'gemm', 'as-is'. */
  readonly kernel: string
  /** The large weight this option reads in its own form; absent for layers without one. */
  readonly weight?: SliceableWeight
  /** Whether the weight may be split into slices (the op supports channel ranges). */
  readonly weightSliceable: boolean
  /** Other constant bytes read whole (not sliced). */
  readonly fixedBytes: number
  /** Workspace bytes for a given input slice count. */
  readonly workspace: (inputSlices: number) => number
  readonly defaultInputSlices: number
  /** 1 when the kernel has no input slicing. */
  readonly maxInputSlices: number
}

export interface LayerInfo {
  readonly step: number
  /** Activation bytes live during the step (its inputs, outputs and everything alive across it). */
  readonly liveBytes: number
  /** Options in latency order (best first); at least one. */
  readonly options: readonly KernelOption[]
}

export interface LayerChoice {
  readonly option: number
  readonly weightSlices: number
  readonly inputSlices: number
  /** The footprint of the choice. */
  readonly bytes: number
}

/** Extra bytes a weight slice may need: an unaligned sub-range is read as its 4096-aligned cover. */
export const sliceReadSlack = 8192

const ceilDiv = (a: number, b: number): number => Math.ceil(a / b)

/** Units of channels in a weight. */
export function weightUnits(w: SliceableWeight): number {
  return Math.max(1, ceilDiv(w.channels, w.unit))
}

/**
 * Channel boundaries of `slices` slices: multiples of `unit` (the last ends at `channels`), as even as
 * whole units allow, first slices the larger. Length slices + 1.
 */
export function sliceBounds(channels: number, unit: number, slices: number): number[] {
  const units = Math.max(1, ceilDiv(channels, unit))
  const n = Math.min(Math.max(1, slices), units)
  const bounds = [0]
  for (let i = 1; i < n; i++) bounds.push(Math.min(channels, Math.round((units * i) / n) * unit))
  bounds.push(channels)
  return bounds
}

/** Bytes of the largest slice when the weight is cut into `slices` slices (with read slack when cut). */
export function sliceBytes(w: SliceableWeight, slices: number): number {
  if (slices <= 1) return w.bytes
  const bounds = sliceBounds(w.channels, w.unit, slices)
  let most = 0
  for (let i = 1; i < bounds.length; i++) most = Math.max(most, ceilDiv(bounds[i]! - bounds[i - 1]!, w.unit) * w.unitBytes)
  return most + sliceReadSlack
}

/** The footprint of a layer with option o, ws weight slices and is input slices. */
export function layerBytes(layer: LayerInfo, o: KernelOption, ws: number, is: number): number {
  return layer.liveBytes + o.fixedBytes + (o.weight === undefined ? 0 : sliceBytes(o.weight, ws)) + o.workspace(is)
}

/**
 * The fewest weight slices (>= 1) with footprint <= limit and, for a sliceable weight, a slice of at
 * most `window` bytes where the most slices allow it; undefined when the footprint cannot fit.
 */
function fewestWeightSlices(layer: LayerInfo, o: KernelOption, is: number, limit: number, window: number): number | undefined {
  const fit = fewestFitting(layer, o, is, limit)
  if (fit === undefined || o.weight === undefined || !o.weightSliceable || sliceBytes(o.weight, fit) <= window) return fit
  const w = o.weight
  const most = weightUnits(w)
  if (sliceBytes(w, most) > window) return most
  let lo = fit // too large a slice
  let hi = most // within the window
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if (sliceBytes(w, mid) <= window) hi = mid
    else lo = mid
  }
  return hi
}

/** The fewest weight slices (>= 1) with footprint <= limit, or undefined. */
function fewestFitting(layer: LayerInfo, o: KernelOption, is: number, limit: number): number | undefined {
  if (layerBytes(layer, o, 1, is) <= limit) return 1
  if (o.weight === undefined || !o.weightSliceable) return undefined
  const most = weightUnits(o.weight)
  if (layerBytes(layer, o, most, is) > limit) return undefined
  let lo = 1 // does not fit
  let hi = most // fits
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if (layerBytes(layer, o, mid, is) <= limit) hi = mid
    else lo = mid
  }
  return hi
}

/**
 * The smallest footprint any option of the layer can reach: the most weight slices or none (a small
 * weight cut into slices can take more than whole, because of the read slack), at either input slicing.
 */
export function layerMinimumBytes(layer: LayerInfo): number {
  let least = Infinity
  for (const o of layer.options) {
    const most = o.weight !== undefined && o.weightSliceable ? weightUnits(o.weight) : 1
    for (const ws of [1, most]) {
      least = Math.min(least, layerBytes(layer, o, ws, o.maxInputSlices), layerBytes(layer, o, ws, o.defaultInputSlices))
    }
  }
  return least
}

/**
 * The latency-best choice of one layer under `limit`, or undefined when no option fits; with a
 * `window`, a sliceable weight is cut so that one slice takes at most that many bytes.
 */
export function chooseLayer(layer: LayerInfo, limit: number, window = Infinity): LayerChoice | undefined {
  for (let option = 0; option < layer.options.length; option++) {
    const o = layer.options[option]!
    for (const is of o.maxInputSlices > o.defaultInputSlices ? [o.defaultInputSlices, o.maxInputSlices] : [o.defaultInputSlices]) {
      const ws = fewestWeightSlices(layer, o, is, limit, window)
      if (ws !== undefined) return { option, weightSlices: ws, inputSlices: is, bytes: layerBytes(layer, o, ws, is) }
    }
  }
  return undefined
}

/** Thrown when a layer cannot fit the limit with any kernel and slicing. */
export class LayerTooLargeError extends Error {
  constructor(
    readonly step: number,
    readonly minimumBytes: number,
    readonly limit: number,
  ) {
    super(`step ${step} needs at least ${minimumBytes} bytes with the most slicing, above the limit ${limit}`)
    this.name = 'LayerTooLargeError'
  }
}

/**
 * Chooses every layer under `limit` (see the top of this file), each sliceable weight in slices of at
 * most `window` bytes where it can be; throws LayerTooLargeError.
 */
export function planSlicing(layers: readonly LayerInfo[], limit: number, window = Infinity): LayerChoice[] {
  return layers.map((layer) => {
    const c = chooseLayer(layer, limit, window)
    if (c === undefined) throw new LayerTooLargeError(layer.step, layerMinimumBytes(layer), limit)
    return c
  })
}
