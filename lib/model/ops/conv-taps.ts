// SPDX-License-Identifier: Apache-2.0
// Dead taps of a convolution: kernel rows or columns that no output reads inside the input (only
// padding). With a concrete input they are trimmed at plan time: the convolution becomes one with the
// live window of its kernel, its pads shortened by the trimmed taps, and its filter cut to that window by
// the prepack (native conv_window, or the window ints of conv_narrow_filter / grouped_filter). The result
// is the same up to float rounding: a trimmed tap only ever multiplied zeros. DeepLabV3's ASPP head is
// the case: at its 14x14 map, its 3x3 convolutions at dilations 24 and 36 read inside the input through
// the centre tap only, so they are 1x1 convolutions of a ninth of the work.
import type { ConvShape } from './conv-cost.js'
import type { Prepack } from './op-def.js'

/** A window [ky0, ky1) x [kx0, kx1) of a 2-D kernel. */
export interface TapWindow {
  readonly ky0: number
  readonly ky1: number
  readonly kx0: number
  readonly kx1: number
}

/**
 * The taps [k0, k1) of one axis that some output reads inside the input: tap k of output o reads
 * input o * stride - padBegin + k * dilation.
 */
export function liveTaps(inLen: number, outLen: number, kernel: number, stride: number, dilation: number, padBegin: number): [number, number] {
  const lastStart = (outLen - 1) * stride - padBegin // where the last output's tap 0 reads
  const k0 = Math.max(0, Math.ceil(-lastStart / dilation))
  const k1 = Math.min(kernel, Math.floor((inLen - 1 + padBegin) / dilation) + 1)
  return [k0, Math.max(k0, k1)]
}

/**
 * The live window of a 2-D convolution and the convolution over it (kernel cut, begin pads shortened
 * by the trimmed leading taps, end pads by the trailing ones), or undefined when every tap is live, the
 * convolution is not 2-D, or a shortened pad would be negative (an input cropped, which no kernel takes).
 * padEnd: the end pads [rows, columns].
 */
export function trimDeadTaps(s: ConvShape, padEnd: readonly [number, number]): { window: TapWindow; shape: ConvShape; padEnd: [number, number] } | undefined {
  if (s.kernel[0] !== 1 || s.in[0] !== 1 || s.out[0] !== 1) return undefined
  const [ky0, ky1] = liveTaps(s.in[1], s.out[1], s.kernel[1], s.stride[1], s.dilation[1], s.pad[1])
  const [kx0, kx1] = liveTaps(s.in[2], s.out[2], s.kernel[2], s.stride[2], s.dilation[2], s.pad[2])
  if (ky1 <= ky0 || kx1 <= kx0) return undefined // no tap reads the input at all: keep the convolution as it is
  if (ky0 === 0 && kx0 === 0 && ky1 === s.kernel[1] && kx1 === s.kernel[2]) return undefined
  const pad: [number, number, number] = [0, s.pad[1] - ky0 * s.dilation[1], s.pad[2] - kx0 * s.dilation[2]]
  const end: [number, number] = [padEnd[0] - (s.kernel[1] - ky1) * s.dilation[1], padEnd[1] - (s.kernel[2] - kx1) * s.dilation[2]]
  if (pad[1] < 0 || pad[2] < 0 || end[0] < 0 || end[1] < 0) return undefined
  return { window: { ky0, ky1, kx0, kx1 }, shape: { ...s, kernel: [1, ky1 - ky0, kx1 - kx0], pad }, padEnd: end }
}

/** The window's prepack ints [ky0, ky1, kx0, kx1]. */
export function tapWindowInts(w: TapWindow): number[] {
  return [w.ky0, w.ky1, w.kx0, w.kx1]
}

/**
 * The tap window a conv filter's prepack cuts, from its ints: conv_window's four, the four after
 * grouped_filter's group count, or the four of conv_narrow_filter / conv_taps_filter; undefined for a
 * whole filter.
 */
export function tapWindowOfPrepack(p: Prepack): TapWindow | undefined {
  const at = p.transform === 'grouped_filter' ? 1 : 0
  if (p.ints.length !== at + 4) return undefined
  const [ky0, ky1, kx0, kx1] = p.ints.slice(at) as [number, number, number, number]
  return { ky0, ky1, kx0, kx1 }
}
