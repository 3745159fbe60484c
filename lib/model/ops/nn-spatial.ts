// SPDX-License-Identifier: Apache-2.0
// Sliding-window attributes shared by Conv and the pools: kernel, strides, dilations, pads, auto_pad,
// ceil_mode; output dims (symbolic-safe) and the explicit pads the native kernels take.
import { attrInt, attrInts, attrString } from '../attrs.js'
import { dimAdd, dimCeilDiv, dimDiv, dimSub, isConcrete } from '../dims.js'
import type { Dim } from '../ir.js'
import type { OpContext } from './op-def.js'
import { shapeError, unsupported } from './op-util.js'

export interface Window {
  readonly kernel: readonly number[]
  readonly strides: readonly number[]
  readonly dilations: readonly number[]
  /** NOTSET, VALID, SAME_UPPER or SAME_LOWER. */
  readonly autoPad: string
  /** Explicit pads: begin[nsp] then end[nsp] (zeros when not given). */
  readonly pads: readonly number[]
  readonly ceil: boolean
}

function listOf(ctx: OpContext, name: string, n: number, fallback: number, min: number): number[] {
  const v = attrInts(ctx.node, name) ?? new Array<number>(n).fill(fallback)
  if (v.length !== n) throw shapeError(ctx, `${name} has ${v.length} entries, expected ${n}`)
  if (v.some((x) => !Number.isInteger(x) || x < min)) throw shapeError(ctx, `${name} [${v.join(', ')}] is invalid`)
  return v
}

/** Reads the window attributes; `kernel` is kernel_shape or, when absent, the given fallback. */
export function windowAttrs(ctx: OpContext, nsp: number, kernelFallback?: readonly Dim[]): Window {
  let kernel = attrInts(ctx.node, 'kernel_shape')
  if (kernel === undefined) {
    if (kernelFallback === undefined) throw shapeError(ctx, 'kernel_shape is required')
    if (!kernelFallback.every(isConcrete)) throw unsupported(ctx, 'the kernel dims must be known before the run')
    kernel = kernelFallback.slice() as number[]
  }
  if (kernel.length !== nsp) throw shapeError(ctx, `kernel_shape has ${kernel.length} entries, expected ${nsp}`)
  if (kernel.some((k) => !Number.isInteger(k) || k < 1)) throw shapeError(ctx, `kernel_shape [${kernel}] is invalid`)
  let autoPad = attrString(ctx.node, 'auto_pad', 'NOTSET')
  if (autoPad === '') autoPad = 'NOTSET'
  if (!['NOTSET', 'VALID', 'SAME_UPPER', 'SAME_LOWER'].includes(autoPad)) {
    throw shapeError(ctx, `auto_pad ${autoPad} is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER`)
  }
  const pads = autoPad === 'NOTSET' ? listOf(ctx, 'pads', 2 * nsp, 0, 0) : new Array<number>(2 * nsp).fill(0)
  return {
    kernel,
    strides: listOf(ctx, 'strides', nsp, 1, 1),
    dilations: listOf(ctx, 'dilations', nsp, 1, 1),
    autoPad,
    pads,
    ceil: attrInt(ctx.node, 'ceil_mode', 0) !== 0,
  }
}

function extent(w: Window, i: number): number {
  return ((w.kernel[i] ?? 1) - 1) * (w.dilations[i] ?? 1) + 1
}

/** Output length along spatial axis i for input length `len` (pads resolved for SAME). */
function outLen(w: Window, i: number, len: Dim): Dim {
  const s = w.strides[i] ?? 1
  if (w.autoPad === 'SAME_UPPER' || w.autoPad === 'SAME_LOWER') return dimCeilDiv(len, s)
  const pb = w.pads[i] ?? 0
  const pe = w.pads[w.kernel.length + i] ?? 0
  const span = dimSub(dimAdd(len, pb + pe), extent(w, i))
  if (!isConcrete(span)) return dimAdd(w.ceil ? dimCeilDiv(span, s) : dimDiv(span, s), 1)
  if (span < 0) return 0
  let out = (w.ceil ? Math.ceil(span / s) : Math.floor(span / s)) + 1
  // ceil_mode: the last window must start inside the input or its begin padding.
  if (w.ceil && (out - 1) * s >= (len as number) + pb) out -= 1
  return out
}

/** Output spatial dims for input spatial dims. */
export function windowOutDims(w: Window, spatial: readonly Dim[]): Dim[] {
  return spatial.map((d, i) => outLen(w, i, d))
}

/**
 * A node's output spatial dims (windowOutDims), as a ShapeError where an input is smaller than the
 * padded window, so the output would have no pixels (onnxruntime rejects such inputs as well).
 */
export function windowOutput(ctx: OpContext, w: Window, spatial: readonly Dim[]): Dim[] {
  const out = windowOutDims(w, spatial)
  out.forEach((d, i) => {
    if (isConcrete(d) && d < 1) {
      const pads = w.autoPad === 'SAME_UPPER' || w.autoPad === 'SAME_LOWER' ? w.autoPad : `${w.pads[i] ?? 0}+${w.pads[w.kernel.length + i] ?? 0}`
      throw shapeError(ctx, `spatial input size ${String(spatial[i])} (axis ${i + 2}) is smaller than the window (kernel ${w.kernel[i]}, dilation ${w.dilations[i] ?? 1}, pads ${pads}): the output would be empty; give a larger input`)
    }
  })
  return out
}

/** Explicit begin/end pads for concrete input spatial dims (auto_pad resolved). */
export function windowPads(w: Window, spatial: readonly number[]): { begin: number[]; end: number[] } {
  const n = w.kernel.length
  const begin: number[] = []
  const end: number[] = []
  for (let i = 0; i < n; i++) {
    const len = spatial[i] ?? 1
    if (w.autoPad === 'SAME_UPPER' || w.autoPad === 'SAME_LOWER') {
      const s = w.strides[i] ?? 1
      const out = Math.ceil(len / s)
      const total = Math.max(0, (out - 1) * s + extent(w, i) - len)
      const small = Math.floor(total / 2)
      begin.push(w.autoPad === 'SAME_UPPER' ? small : total - small)
      end.push(w.autoPad === 'SAME_UPPER' ? total - small : small)
    } else {
      begin.push(w.pads[i] ?? 0)
      end.push(w.pads[n + i] ?? 0)
    }
  }
  return { begin, end }
}

/** The native spatial block: [nsp, kernel, strides, dilations, pads_begin(, pads_end)]. */
export function windowInts(w: Window, begin: readonly number[], end?: readonly number[]): number[] {
  return [w.kernel.length, ...w.kernel, ...w.strides, ...w.dilations, ...begin, ...(end ?? [])]
}
