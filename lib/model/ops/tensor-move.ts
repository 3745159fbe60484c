// SPDX-License-Identifier: Apache-2.0
// Data-movement operators computed by strided copies: Transpose, Concat, Split, Slice, Expand, Tile.
import { ModelFormatError } from '../../errors.js'
import { attrInt, attrInts } from '../attrs.js'
import { broadcastDims, dimAdd, dimCeilDiv, dimDiv, dimMul, isConcrete } from '../dims.js'
import type { Dim } from '../ir.js'
import { info, type OpContext, type OpDef } from './op-def.js'
import { input, knownDims, requireNumbers, shapeError, unsupported, valueNeeded } from './op-util.js'
import { sliceAxis, sliceSpec } from './tensor-slice.js'
import { axisOf, foldable, mapCoords, numericDims, valueAt } from './tensor-util.js'

const transpose: OpDef = {
  opType: 'Transpose',
  infer(ctx) {
    const x = input(ctx, 0)
    const r = x.dims.length
    const perm = attrInts(ctx.node, 'perm') ?? x.dims.map((_, i) => r - 1 - i)
    if (perm.length !== r || new Set(perm).size !== r || perm.some((p) => !Number.isInteger(p) || p < 0 || p >= r)) {
      const what = `node '${ctx.node.name}' (Transpose)`
      throw new ModelFormatError(`${what}: perm [${perm.join(', ')}] is not a permutation of ${r} axes`)
    }
    const dims = perm.map((p) => x.dims[p]!)
    const xd = numericDims(x)
    if (x.values !== undefined && xd !== undefined && foldable(x.dtype, dims)) {
      const values = mapCoords(dims, (c) => valueAt(x.values!, xd, perm.map((_, k) => c[perm.indexOf(k)]!)))
      return { outputs: [info(x.dtype, dims, values)] }
    }
    return { outputs: [info(x.dtype, dims)], kernel: () => ({ op: 'Transpose', inputs: [0], ints: perm, floats: [] }) }
  },
}

const concat: OpDef = {
  opType: 'Concat',
  infer(ctx) {
    const xs = ctx.node.inputs.map((_, i) => input(ctx, i))
    const first = xs[0]
    if (first === undefined) throw shapeError(ctx, 'needs at least one input')
    const r = first.dims.length
    const axis = axisOf(ctx, attrInt(ctx.node, 'axis', 0), r)
    const dims = first.dims.slice()
    dims[axis] = 0
    for (const [i, x] of xs.entries()) {
      if (x.dims.length !== r) throw shapeError(ctx, `input ${i} has rank ${x.dims.length}, expected ${r}`)
      if (x.dtype !== first.dtype) throw shapeError(ctx, `input ${i} is ${x.dtype}, expected ${first.dtype}`)
      for (let k = 0; k < r; k++) {
        const d = x.dims[k]!
        if (k === axis) dims[k] = dimAdd(dims[k]!, d)
        else if (!isConcrete(dims[k]!) && isConcrete(d)) dims[k] = d
        else if (isConcrete(dims[k]!) && isConcrete(d) && d !== dims[k]) {
          throw shapeError(ctx, `input ${i} has dim ${k} = ${d}, expected ${dims[k]}`)
        }
      }
    }
    if (foldable(first.dtype, dims) && xs.every((x) => x.values !== undefined && numericDims(x))) {
      const outer = dims.slice(0, axis).reduce<number>((p, d) => p * (d as number), 1)
      const values: Dim[] = []
      for (let o = 0; o < outer; o++) {
        for (const x of xs) {
          const block = (x.values!.length / Math.max(outer, 1)) | 0
          values.push(...x.values!.slice(o * block, (o + 1) * block))
        }
      }
      return { outputs: [info(first.dtype, dims, values)] }
    }
    return {
      outputs: [info(first.dtype, dims)],
      kernel: () => ({ op: 'Concat', inputs: xs.map((_, i) => i), ints: [axis], floats: [] }),
    }
  },
}

function splitSizes(ctx: OpContext, dim: Dim, n: number): Dim[] {
  const fromInput = ctx.inputs[1] ? requireNumbers(ctx, 1, 'split') : undefined
  const given = ctx.opset < 13 ? attrInts(ctx.node, 'split') : fromInput
  if (given !== undefined) {
    if (given.length !== n) throw shapeError(ctx, `split has ${given.length} sizes for ${n} outputs`)
    if (isConcrete(dim) && given.reduce((a, b) => a + b, 0) !== dim) {
      throw shapeError(ctx, `split sizes [${given.join(', ')}] do not add up to ${dim}`)
    }
    return given
  }
  if (ctx.opset >= 18 && ctx.node.attrs.has('num_outputs')) {
    const part = dimCeilDiv(dim, n)
    if (!isConcrete(dim) || !isConcrete(part)) return new Array<Dim>(n).fill(part)
    return Array.from({ length: n }, (_, i) => Math.max(0, Math.min(part, dim - i * part)))
  }
  if (isConcrete(dim) && dim % n !== 0) throw shapeError(ctx, `dim ${dim} does not split into ${n} equal parts`)
  return new Array<Dim>(n).fill(dimDiv(dim, n))
}

const split: OpDef = {
  opType: 'Split',
  infer(ctx) {
    const x = input(ctx, 0)
    const axis = axisOf(ctx, attrInt(ctx.node, 'axis', 0), x.dims.length)
    const n = ctx.node.outputs.length
    const sizes = splitSizes(ctx, x.dims[axis]!, n)
    const outs = sizes.map((s) => x.dims.map((d, k) => (k === axis ? s : d)))
    const xd = numericDims(x)
    if (x.values !== undefined && xd !== undefined && outs.every((d) => foldable(x.dtype, d))) {
      let at = 0
      const outputs = outs.map((dims, i) => {
        const from = at
        at += sizes[i] as number
        const values = mapCoords(dims as number[], (c) =>
          valueAt(x.values!, xd, c.map((v, k) => (k === axis ? v + from : v))),
        )
        return info(x.dtype, dims, values)
      })
      return { outputs }
    }
    return {
      outputs: outs.map((d) => info(x.dtype, d)),
      kernel: () => ({ op: 'Split', inputs: [0], ints: [axis], floats: [] }),
    }
  },
}

const slice: OpDef = {
  opType: 'Slice',
  infer(ctx) {
    const x = input(ctx, 0)
    const r = x.dims.length
    const spec = sliceSpec(ctx, r)
    const dims = x.dims.slice()
    const starts = new Array<Dim>(r).fill(0)
    const steps = new Array<number>(r).fill(1)
    for (const s of spec) {
      const a = sliceAxis(ctx, x.dims[s.axis]!, s)
      dims[s.axis] = a.count
      starts[s.axis] = a.start
      steps[s.axis] = s.step
    }
    const xd = numericDims(x)
    if (x.values !== undefined && xd !== undefined && foldable(x.dtype, dims) && starts.every(isConcrete)) {
      const st = starts as number[]
      const values = mapCoords(dims, (c) => valueAt(x.values!, xd, c.map((v, k) => st[k]! + v * steps[k]!)))
      return { outputs: [info(x.dtype, dims, values)] }
    }
    return {
      outputs: [info(x.dtype, dims)],
      kernel: () => {
        if (!starts.every(isConcrete)) throw unsupported(ctx, 'starts must be numbers at plan time')
        return { op: 'Slice', inputs: [0], ints: [...(starts as number[]), ...steps], floats: [] }
      },
    }
  },
}

const expand: OpDef = {
  opType: 'Expand',
  infer(ctx) {
    const x = input(ctx, 0)
    input(ctx, 1)
    const shape = knownDims(ctx, 1)
    if (shape === undefined) throw valueNeeded(ctx, 1, 'shape')
    const dims = broadcastDims(x.dims, shape, `node '${ctx.node.name}' (Expand)`)
    const xd = numericDims(x)
    if (x.values !== undefined && xd !== undefined && foldable(x.dtype, dims)) {
      const shift = dims.length - xd.length
      const values = mapCoords(dims, (c) => valueAt(x.values!, xd, xd.map((d, k) => (d === 1 ? 0 : c[k + shift]!))))
      return { outputs: [info(x.dtype, dims, values)] }
    }
    return { outputs: [info(x.dtype, dims)], kernel: () => ({ op: 'Expand', inputs: [0], ints: [], floats: [] }) }
  },
}

const tile: OpDef = {
  opType: 'Tile',
  infer(ctx) {
    const x = input(ctx, 0)
    input(ctx, 1)
    const reps = requireNumbers(ctx, 1, 'repeats')
    if (reps.length !== x.dims.length) {
      throw shapeError(ctx, `repeats has ${reps.length} entries for rank ${x.dims.length}`)
    }
    if (reps.some((r) => r < 0)) throw shapeError(ctx, `repeats [${reps.join(', ')}] has a negative entry`)
    const dims = x.dims.map((d, k) => dimMul(d, reps[k]!))
    const xd = numericDims(x)
    if (x.values !== undefined && xd !== undefined && foldable(x.dtype, dims)) {
      const values = mapCoords(dims, (c) => valueAt(x.values!, xd, c.map((v, k) => v % xd[k]!)))
      return { outputs: [info(x.dtype, dims, values)] }
    }
    return { outputs: [info(x.dtype, dims)], kernel: () => ({ op: 'Tile', inputs: [0], ints: reps, floats: [] }) }
  },
}

export const moveOps: OpDef[] = [transpose, concat, split, slice, expand, tile]
