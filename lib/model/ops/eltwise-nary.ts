// SPDX-License-Identifier: Apache-2.0
// Variadic and mixed-dtype broadcasting ops: Sum, Max, Min, Mean (native 'Binary' folded over the
// inputs), Pow (native 'Pow', exponent of any numeric dtype) and Where (native 'Where').
import { isFloat } from '../dtype.js'
import type { Dim } from '../ir.js'
import { dimAdd, isConcrete } from '../dims.js'
import type { OpDef } from './op-def.js'
import { info } from './op-def.js'
import { input } from './op-util.js'
import { BinaryCode } from './eltwise-codes.js'
import { presentInputs, requireDtype, requireSameDtype } from './eltwise-check.js'
import { ALL_DTYPES, FLOAT_DTYPES, NUMERIC_DTYPES, foldValues, normalize } from './eltwise-values.js'
import { broadcastAll, maxDim, minDim } from './eltwise-binary.js'

type Reduce = (acc: Dim, x: Dim) => Dim | undefined

function variadicDef(opType: string, code: number, mean: boolean, reduce: Reduce): OpDef {
  return {
    opType,
    infer(ctx) {
      const xs = presentInputs(ctx)
      const dtype = requireSameDtype(ctx, xs, 'inputs')
      requireDtype(ctx, dtype, mean ? FLOAT_DTYPES : NUMERIC_DTYPES, 'input')
      const dims = broadcastAll(
        ctx,
        xs.map((x) => x.dims),
      )
      const values = foldValues(xs, dims, (vs) => {
        let acc: Dim | undefined = vs[0]
        // rounding after every step, as the kernel does, keeps float32 folds bit-exact
        for (let k = 1; k < vs.length && acc !== undefined; k++) acc = normalize(dtype, reduce(acc, vs[k] as Dim))
        if (acc !== undefined && mean) acc = isConcrete(acc) ? acc / vs.length : undefined
        return normalize(dtype, acc)
      })
      return {
        outputs: [info(dtype, dims, values)],
        kernel: () => ({ op: 'Binary', inputs: xs.map((_, i) => i), ints: [code, +mean], floats: [] }),
      }
    },
  }
}

const add: Reduce = (a, b) => (isConcrete(a) && isConcrete(b) ? a + b : dimAdd(a, b))

const powDef: OpDef = {
  opType: 'Pow',
  infer(ctx) {
    const x = input(ctx, 0)
    const y = input(ctx, 1)
    requireDtype(ctx, x.dtype, NUMERIC_DTYPES, 'base')
    requireDtype(ctx, y.dtype, NUMERIC_DTYPES, 'exponent')
    const dims = broadcastAll(ctx, [x.dims, y.dims])
    // integer bases only: float pow in JS and powf may differ in the last bit (the engine folds those natively)
    const values = isFloat(x.dtype)
      ? undefined
      : foldValues([x, y], dims, ([a, b]) =>
          a !== undefined && b !== undefined && isConcrete(a) && isConcrete(b) ? normalize(x.dtype, a ** b) : undefined,
        )
    return {
      outputs: [info(x.dtype, dims, values)],
      kernel: () => ({ op: 'Pow', inputs: [0, 1], ints: [], floats: [] }),
    }
  },
}

const whereDef: OpDef = {
  opType: 'Where',
  infer(ctx) {
    const c = input(ctx, 0)
    const x = input(ctx, 1)
    const y = input(ctx, 2)
    requireDtype(ctx, c.dtype, ['bool'], 'condition')
    const dtype = requireSameDtype(ctx, [x, y], 'X and Y')
    requireDtype(ctx, dtype, ALL_DTYPES, 'input')
    const dims = broadcastAll(ctx, [c.dims, x.dims, y.dims])
    const values = foldValues([c, x, y], dims, ([k, a, b]) =>
      k === undefined || !isConcrete(k) ? undefined : k !== 0 ? a : b,
    )
    return {
      outputs: [info(dtype, dims, values)],
      kernel: () => ({ op: 'Where', inputs: [0, 1, 2], ints: [], floats: [] }),
    }
  },
}

export const naryOps: OpDef[] = [
  variadicDef('Sum', BinaryCode.add, false, add),
  variadicDef('Mean', BinaryCode.add, true, add),
  variadicDef('Max', BinaryCode.max, false, maxDim),
  variadicDef('Min', BinaryCode.min, false, minDim),
  powDef,
  whereDef,
]
