// SPDX-License-Identifier: Apache-2.0
// Arithmetic on possibly symbolic dimensions (Nimble's "Any" dims): numbers fold, symbols stay
// as readable expressions, so shape functions work the same on symbolic and concrete shapes.
import { ShapeError } from '../errors.js'
import type { Dim } from './ir.js'

export function isConcrete(d: Dim): d is number {
  return typeof d === 'number'
}

export function allConcrete(dims: readonly Dim[]): dims is readonly number[] {
  return dims.every(isConcrete)
}

/** The dims as numbers; throws if any is symbolic (use only where a concrete plan is built). */
export function concrete(dims: readonly Dim[], what: string): number[] {
  if (!allConcrete(dims)) throw new ShapeError(`${what}: dims [${dims.join(', ')}] are not concrete`)
  return dims.slice()
}

const wrap = (d: Dim): string => (typeof d === 'number' || /^[\w.]+$/.test(d) ? String(d) : `(${d})`)

/** Whether every parenthesis of s closes inside it (never more closed than opened). */
function balanced(s: string): boolean {
  let depth = 0
  for (const c of s) {
    if (c === '(') depth++
    else if (c === ')' && --depth < 0) return false
  }
  return depth === 0
}

/** s without parentheses that enclose all of it. */
function unwrap(s: string): string {
  while (s.startsWith('(') && s.endsWith(')') && balanced(s.slice(1, -1))) s = s.slice(1, -1)
  return s
}

/**
 * A symbolic dim as a base and a constant offset: 'x+3' -> ['x', 3], '((h-1)/2)+1' -> ['(h-1)/2', 1].
 * Constants added and subtracted along a chain of layers then fold, so that two paths computing the same
 * size write it the same way: a 1x1 stride-2 convolution's ((h-1)/2)+1 and a padded 3x3 stride-2 one's
 * ((h+2-3)/2)+1 (a residual Add of the two is then seen to add equal shapes, lib/model/fuse-residual.ts).
 */
function splitOffset(d: string): [string, number] {
  const m = /^(.*)([+-])(\d+)$/.exec(d)
  if (m === null || !balanced(m[1]!)) return [d, 0]
  const [base, off] = splitOffset(unwrap(m[1]!))
  return [base, off + (m[2] === '+' ? Number(m[3]) : -Number(m[3]))]
}

function withOffset(base: string, offset: number): Dim {
  if (offset === 0) return base
  return `${wrap(base)}${offset > 0 ? '+' : '-'}${Math.abs(offset)}`
}

export function dimAdd(a: Dim, b: Dim): Dim {
  if (isConcrete(a) && isConcrete(b)) return a + b
  if (b === 0) return a
  if (a === 0) return b
  if (isConcrete(b)) {
    const [base, off] = splitOffset(a as string)
    return withOffset(base, off + b)
  }
  if (isConcrete(a)) return dimAdd(b, a)
  return `${wrap(a)}+${wrap(b)}`
}

export function dimSub(a: Dim, b: Dim): Dim {
  if (isConcrete(a) && isConcrete(b)) return a - b
  if (b === 0) return a
  if (a === b) return 0
  if (isConcrete(b)) {
    const [base, off] = splitOffset(a as string)
    return withOffset(base, off - b)
  }
  return `${wrap(a)}-${wrap(b)}`
}

export function dimMul(a: Dim, b: Dim): Dim {
  if (isConcrete(a) && isConcrete(b)) return a * b
  if (a === 1) return b
  if (b === 1) return a
  if (a === 0 || b === 0) return 0
  return `${wrap(a)}*${wrap(b)}`
}

/** floor(a / b) */
export function dimDiv(a: Dim, b: Dim): Dim {
  if (isConcrete(a) && isConcrete(b)) return Math.floor(a / b)
  if (b === 1) return a
  return `${wrap(a)}/${wrap(b)}`
}

/** ceil(a / b) */
export function dimCeilDiv(a: Dim, b: Dim): Dim {
  if (isConcrete(a) && isConcrete(b)) return Math.ceil(a / b)
  if (b === 1) return a
  return `ceil(${wrap(a)}/${wrap(b)})`
}

export function dimProduct(dims: readonly Dim[]): Dim {
  return dims.reduce<Dim>((p, d) => dimMul(p, d), 1)
}

/** Numpy broadcasting of two shapes; `what` names the node for the error message. */
export function broadcastDims(a: readonly Dim[], b: readonly Dim[], what: string): Dim[] {
  const rank = Math.max(a.length, b.length)
  const out: Dim[] = []
  for (let i = 0; i < rank; i++) {
    const x = a[a.length - rank + i] ?? 1
    const y = b[b.length - rank + i] ?? 1
    if (x === y || y === 1) out.push(x)
    else if (x === 1) out.push(y)
    else if (!isConcrete(x) || !isConcrete(y)) out.push(isConcrete(x) ? x : y)
    else throw new ShapeError(`${what}: shapes [${a.join(', ')}] and [${b.join(', ')}] do not broadcast`)
  }
  return out
}

/** Resolve a possibly negative axis against a rank; throws on out-of-range. */
export function normAxis(axis: number, rank: number, what: string): number {
  const a = axis < 0 ? axis + rank : axis
  if (!Number.isInteger(a) || a < 0 || a >= rank) {
    throw new ShapeError(`${what}: axis ${axis} is out of range for rank ${rank}`)
  }
  return a
}

export function dimsToString(dims: readonly Dim[]): string {
  return `[${dims.join(', ')}]`
}
