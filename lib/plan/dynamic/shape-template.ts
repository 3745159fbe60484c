// SPDX-License-Identifier: Apache-2.0
// A bucket's program template (Nimble: plan once at the bucket's ceiling, run on the actual sizes). The
// ceiling's program keeps every offset and every op word; the dims of its tensor slots become functions
// of the input dims (the symbolic shape functions, compiled by dim-expr.ts). A new input shape in the
// bucket costs one evaluation of those functions: no shape inference, no memory planning.
//
//   words     the ceiling program (native/runtime/program.h): slot i's record at 3 + i * (4 + maxRank)
//   patches   word positions of the dims that vary in the bucket, and the function of each
//   shape constants   values the concrete pass folds to constants whose contents depend on the shape
//             (BERT's position embeddings sliced to the sequence): the engine recomputes them for the
//             actual shape into a slot sized at the ceiling, and their dims are patched the same way.
//
// Memory safety does not rest on the shape functions being right: instantiate() checks every patched
// activation against the bytes the ceiling plan gave it, and the template is only used after it equals
// the exactly built program word for word at the bucket's probe shapes (templateMismatch).
import { dtypeBytes, dtypeFromCode } from '../../model/dtype.js'
import type { Dim } from '../../model/ir.js'
import type { BuiltProgram, SlotOrigin } from '../program-builder.js'
import { maxRank } from '../program-builder.js'
import type { ProgramOutput } from '../execution-plan.js'
import { compileDim, DimExprError, type DimBindings, type DimFn } from './dim-expr.js'

const slotWords = 4 + maxRank

/** A slot whose contents the engine recomputes per shape: its name, slot, and bytes at the ceiling. */
export interface ShapeConstantSlot {
  readonly name: string
  readonly slot: number
  readonly offset: number
  readonly capacity: number
}

export interface ShapeTemplate {
  readonly words: Float64Array
  /** Per patched dim: its word, and which of `fns` gives its value. */
  readonly patchWords: Int32Array
  readonly patchFn: Int32Array
  /** The distinct shape functions of the patched dims (a transformer has a handful for hundreds of dims). */
  readonly fns: readonly DimFn[]
  /** Activation slots with patched dims: slot, element bytes, and bytes at the ceiling (the planned room). */
  readonly checked: ReadonlyArray<{ readonly slot: number; readonly elem: number; readonly room: number }>
  readonly outputs: ReadonlyArray<Omit<ProgramOutput, 'dims'> & { readonly dims: readonly DimFn[] }>
  readonly shapeConstants: readonly ShapeConstantSlot[]
}

/** Where the symbolic dims of a slot come from: the symbolic pass's value or unnamed node output. */
export type SymbolicDims = (origin: SlotOrigin) => readonly Dim[] | undefined

function slotBase(i: number): number {
  return 3 + i * slotWords
}

/** The parts of a built program a template reads. */
export type TemplateSource = Pick<BuiltProgram, 'program' | 'slotOrigins' | 'outputs'>

/**
 * The template of a program built at the bucket's ceiling. `shapeConstants` names the constants the
 * engine recomputes per shape (their arena offsets as placed at the ceiling). Throws DimExprError when
 * a slot has no symbolic shape, a rank differs, or the functions do not give the ceiling's dims back.
 * `oneRegion`: a memory-budget program, whose activations share region 0 with the constants (its
 * constants have fixed dims, or are shape constants); otherwise region 0 holds constants only.
 */
export function makeTemplate(
  built: TemplateSource,
  ceiling: DimBindings,
  symbols: readonly string[],
  symbolicDims: SymbolicDims,
  shapeConstants: ReadonlySet<string>,
  oneRegion = false,
): ShapeTemplate {
  const words = built.program
  const nSlots = words[1]!
  const patchWords: number[] = []
  const patchFn: number[] = []
  const fns: DimFn[] = []
  const checked: Array<{ slot: number; elem: number; room: number }> = []
  const constants: ShapeConstantSlot[] = []
  const cache = new Map<string, DimFn>()
  const fnOf = (d: Dim): DimFn => {
    const key = String(d)
    let f = cache.get(key)
    if (f === undefined) cache.set(key, (f = compileDim(d, symbols)))
    return f
  }
  for (let i = 0; i < nSlots; i++) {
    const origin = built.slotOrigins[i]!
    const p = slotBase(i)
    const region = words[p]!
    const rank = words[p + 3]!
    const elem = dtypeBytes(dtypeFromCode(words[p + 2]!)!)
    // fixed at the ceiling: scratch bytes (room enough for every smaller shape), transformed constants,
    // and views (a probe that differs shows a view that varies: the template is then not used)
    if (origin.kind === 'workspace' || origin.kind === 'prepack' || origin.kind === 'view') continue
    if (origin.kind === 'value' && shapeConstants.has(origin.name)) {
      constants.push({ name: origin.name, slot: i, offset: words[p + 1]!, capacity: elem * count(words, p) })
      continue
    }
    if (region === 0 && !oneRegion) continue // a constant of every shape
    const dims = symbolicDims(origin)
    const what = describe(origin)
    if (dims === undefined) throw new DimExprError(`${what} has no symbolic shape`)
    if (dims.length !== rank) throw new DimExprError(`${what}: symbolic rank ${dims.length}, planned rank ${rank}`)
    let varies = false
    dims.forEach((d, j) => {
      const f = fnOf(d)
      if (f(ceiling) !== words[p + 4 + j]) throw new DimExprError(`${what}: dim ${j} '${d}' is ${f(ceiling)} at the ceiling, planned ${words[p + 4 + j]}`)
      if (typeof d === 'number') return
      patchWords.push(p + 4 + j)
      const k = fns.indexOf(f)
      patchFn.push(k >= 0 ? k : fns.push(f) - 1)
      varies = true
    })
    if (varies && (region === 1 || (oneRegion && region === 0))) checked.push({ slot: i, elem, room: elem * count(words, p) })
  }
  const outputs = built.outputs.map((o) => {
    const origin: SlotOrigin = { kind: 'value', name: o.name }
    const dims = o.source.kind === 'constant' ? o.dims : symbolicDims(origin)
    if (dims === undefined || dims.length !== o.dims.length) throw new DimExprError(`output '${o.name}' has no symbolic shape of rank ${o.dims.length}`)
    return { ...o, dims: dims.map(fnOf) }
  })
  return { words, patchWords: Int32Array.from(patchWords), patchFn: Int32Array.from(patchFn), fns, checked, outputs, shapeConstants: constants }
}

function count(words: Float64Array, p: number): number {
  let n = 1
  for (let j = 0; j < words[p + 3]!; j++) n *= words[p + 4 + j]!
  return n
}

/**
 * The program for one input shape of the bucket: the ceiling's words with the dims evaluated, and the
 * shape constants' dims as recomputed. Throws DimExprError when a tensor would outgrow the bytes the
 * ceiling plan gave it (a shape function that is not monotone in the dims; the engine then plans exactly).
 */
export function instantiate(t: ShapeTemplate, b: DimBindings, constantDims: ReadonlyMap<string, readonly number[]>): Float64Array {
  const w = t.words.slice()
  const values = t.fns.map((f) => f(b))
  for (let k = 0; k < t.patchWords.length; k++) w[t.patchWords[k]!] = values[t.patchFn[k]!]!
  for (const c of t.shapeConstants) {
    const dims = constantDims.get(c.name)
    const p = slotBase(c.slot)
    if (dims === undefined || dims.length !== w[p + 3]) throw new DimExprError(`shape constant '${c.name}' was not recomputed at rank ${w[p + 3]}`)
    dims.forEach((d, j) => (w[p + 4 + j] = d))
    if (count(w, p) * dtypeBytes(dtypeFromCode(w[p + 2]!)!) > c.capacity) throw new DimExprError(`shape constant '${c.name}' outgrows its ${c.capacity} bytes`)
  }
  for (const c of t.checked) {
    const p = slotBase(c.slot)
    const bytes = c.elem * count(w, p)
    if (!(bytes <= c.room) || !(bytes >= 0)) throw new DimExprError(`slot ${c.slot} needs ${bytes} bytes, the ceiling plan gave it ${c.room}`)
  }
  return w
}

/** The graph outputs' dims for one input shape. */
export function outputsAt(t: ShapeTemplate, b: DimBindings): ProgramOutput[] {
  return t.outputs.map((o) => ({ name: o.name, dtype: o.dtype, source: o.source, dims: o.dims.map((f) => f(b)) }))
}

/**
 * Where the template at `b` differs from `exact`, the program built for that shape (with its own memory
 * plan and constants placed anywhere): undefined when they agree on every op word, every slot's region,
 * dtype and dims, every constant's offset (`exact` gives a constant not placed offset -1), and every
 * workspace fits the one the ceiling planned.
 */
export function templateMismatch(t: ShapeTemplate, b: DimBindings, constantDims: ReadonlyMap<string, readonly number[]>, exact: Pick<BuiltProgram, 'program' | 'slotOrigins'>): string | undefined {
  let w: Float64Array
  try {
    w = instantiate(t, b, constantDims)
  } catch (err) {
    if (err instanceof DimExprError) return err.message
    throw err
  }
  const e = exact.program
  if (e.length !== w.length || e[1] !== w[1] || e[2] !== w[2]) return `the program has ${e[1]} slots and ${e[2]} ops, the template ${w[1]} and ${w[2]}`
  const nSlots = w[1]!
  for (let i = 0; i < nSlots; i++) {
    const p = slotBase(i)
    const origin = exact.slotOrigins[i]!
    const sameOffset = e[p] !== 0 || e[p + 1] === -1 || e[p + 1] === w[p + 1] // constants: the same ones (-1: a shape constant)
    if (e[p] !== w[p] || !sameOffset || e[p + 2] !== w[p + 2] || e[p + 3] !== w[p + 3]) return `slot ${i} (${describe(origin)}) is [${e.slice(p, p + 4).join(', ')}] (region, offset, dtype, rank), the template [${w.slice(p, p + 4).join(', ')}]`
    if (origin.kind === 'workspace') {
      if (e[p + 4]! > w[p + 4]!) return `a workspace needs ${e[p + 4]} bytes, the ceiling planned ${w[p + 4]}`
      continue
    }
    for (let j = 0; j < e[p + 3]!; j++) if (e[p + 4 + j] !== w[p + 4 + j]) return `slot ${i} (${describe(origin)}) has dim ${j} = ${e[p + 4 + j]}, the template ${w[p + 4 + j]}`
  }
  for (let k = slotBase(nSlots); k < e.length; k++) if (e[k] !== w[k]) return `op word ${k - slotBase(nSlots)} is ${e[k]}, the template ${w[k]}`
  return undefined
}

function describe(o: SlotOrigin): string {
  return o.kind === 'value' ? `'${o.name}'` : o.kind === 'step-output' ? `output ${o.index} of '${o.node}'` : o.kind
}
