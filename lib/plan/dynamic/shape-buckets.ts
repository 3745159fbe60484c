// SPDX-License-Identifier: Apache-2.0
// Shape buckets (Nimble): the values a symbolic dim may take are cut into ranges, and a bucket is one
// range per dim (a box). Every input shape in a bucket runs on one plan made at the bucket's ceiling,
// its largest shape, so a new shape in a seen bucket needs no planning and no more memory.
//
//   seq_len declared 1..128, default edges: [1,1] [2,2] (2,4] (4,8] ... (64,128]
//   width declared 80..1280:                [80,128] (128,256] (256,512] (512,1024] (1024,1280]
//   an undeclared dim: powers of two without end.
// Pure functions; the engine keeps the plans.
import { ArgumentError, ShapeError } from '../../errors.js'
import type { DimBindings } from './dim-expr.js'

/** A declared dim: the values it may take, inclusive, and optionally the bucket ceilings. */
export interface DimRange {
  readonly min: number
  readonly max: number
  /** Ceilings of the buckets in increasing order; the last is `max`. Default: powers of two, then max. */
  readonly ceilings?: readonly number[]
}

/** A bucket: for each symbolic dim, the range [lo, hi] of its values; `hi` is where the plan is made. */
export interface ShapeBucket {
  readonly key: string
  readonly lo: DimBindings
  readonly hi: DimBindings
}

/** The default ceilings of a declared range: the powers of two above min and below max, then max. */
export function defaultCeilings(min: number, max: number): number[] {
  const out: number[] = []
  let p = 1
  while (p < min) p *= 2
  for (; p < max; p *= 2) out.push(p)
  out.push(max)
  return out
}

/** Checks a declared range (and its ceilings) and fills in the default ceilings. */
export function checkDimRange(name: string, r: DimRange): Required<DimRange> {
  const { min, max } = r
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 1 || max < min) {
    throw new ArgumentError(`dims.${name}: expected [min, max] with integers 1 <= min <= max, got [${min}, ${max}]`)
  }
  const ceilings = r.ceilings ?? defaultCeilings(min, max)
  ceilings.forEach((c, i) => {
    if (!Number.isSafeInteger(c) || c < min || c > max || (i > 0 && c <= ceilings[i - 1]!)) {
      throw new ArgumentError(`buckets.${name}: ceilings must increase within ${min}..${max}, got [${ceilings.join(', ')}]`)
    }
  })
  if (ceilings[ceilings.length - 1] !== max) {
    throw new ArgumentError(`buckets.${name}: the last ceiling must be the declared max ${max}, got [${ceilings.join(', ')}]`)
  }
  return { min, max, ceilings: ceilings.slice() }
}

/** The range of the bucket that holds `v` (v already checked against the declared range). */
function rangeOf(v: number, r: DimRange | undefined): [number, number] {
  if (r === undefined) {
    let hi = 1
    while (hi < v) hi *= 2
    return [hi === 1 ? 1 : hi / 2 + 1, hi]
  }
  const cs = r.ceilings ?? defaultCeilings(r.min, r.max)
  const k = cs.findIndex((c) => v <= c)
  return [k === 0 ? r.min : cs[k - 1]! + 1, cs[k]!]
}

/**
 * The bucket of a shape: for each bound dim, its bucket's range. Throws ShapeError when a value lies
 * outside its declared range, naming the dim, the input it came from and what to do.
 */
export function bucketOf(bindings: DimBindings, ranges: ReadonlyMap<string, DimRange>, where: (dim: string) => string): ShapeBucket {
  const lo = new Map<string, number>()
  const hi = new Map<string, number>()
  const parts: string[] = []
  for (const [name, v] of bindings) {
    const r = ranges.get(name)
    if (r !== undefined && (v < r.min || v > r.max)) {
      throw new ShapeError(
        `${where(name)}: '${name}' is ${v}, outside its declared range ${r.min}..${r.max}; ` +
          `open the model with dims: { ${JSON.stringify(name)}: [${Math.min(r.min, v)}, ${Math.max(r.max, v)}] } to allow it`,
      )
    }
    const [a, b] = rangeOf(v, r)
    lo.set(name, a)
    hi.set(name, b)
    parts.push(`${name}=${a}..${b}`)
  }
  return { key: parts.join(','), lo, hi }
}

/** Every bucket of the declared ranges (undeclared dims left out), largest first. */
export function allBuckets(ranges: ReadonlyMap<string, DimRange>): ShapeBucket[] {
  let boxes: Array<Map<string, [number, number]>> = [new Map()]
  for (const [name, r] of ranges) {
    const cs = r.ceilings ?? defaultCeilings(r.min, r.max)
    const next: Array<Map<string, [number, number]>> = []
    for (const box of boxes) cs.forEach((c, k) => next.push(new Map(box).set(name, [k === 0 ? r.min : cs[k - 1]! + 1, c])))
    boxes = next
  }
  const size = (b: Map<string, [number, number]>): number => [...b.values()].reduce((p, [, h]) => p * h, 1)
  return boxes
    .sort((a, b) => size(b) - size(a))
    .map((box) => bucketOf(new Map([...box].map(([n, [, h]]) => [n, h])), ranges, (n) => n))
}

/**
 * The probe shapes a bucket's template is checked at besides its ceiling: the floor, and for each dim a
 * point inside the range whose value differs from the ceiling's in parity and in its residue modulo 4,
 * others at their ceiling (what a tiling or a stride would tell apart). Duplicates dropped.
 */
export function bucketProbes(b: ShapeBucket): DimBindings[] {
  const out: Array<Map<string, number>> = [new Map(b.lo)]
  for (const [name, lo] of b.lo) {
    const hi = b.hi.get(name)!
    for (const v of [hi - 1, hi - 2, hi - 3, Math.floor((lo + hi) / 2)]) {
      if (v > lo && v < hi) out.push(new Map(b.hi).set(name, v))
    }
  }
  const seen = new Set<string>()
  return out.filter((m) => {
    const k = [...m.values()].join(',')
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}
