// SPDX-License-Identifier: Apache-2.0
// Checks infer() feeds against the model's inputs: names, dtypes, ranks, fixed dims, and that
// every symbolic dim (batch, seq_len ...) binds to one value across all inputs.
import { InputError, ShapeError } from '../errors.js'
import { arrayFits, isDType } from '../model/dtype.js'
import type { ValueDecl } from '../model/ir.js'
import { numel } from '../model/ir.js'
import type { Tensor } from '../model/tensor.js'

function isTypedArray(x: unknown): boolean {
  return ArrayBuffer.isView(x) && !(x instanceof DataView)
}

function checkTensor(name: string, t: unknown, decl: ValueDecl): Tensor {
  if (typeof t !== 'object' || t === null) throw new InputError(`input '${name}': expected a tensor {dtype, dims, data}, got ${t === null ? 'null' : typeof t}`)
  const { dtype, dims, data } = t as Partial<Tensor>
  if (!isDType(dtype)) throw new InputError(`input '${name}': unknown dtype ${String(dtype)}`)
  if (dtype !== decl.dtype) throw new InputError(`input '${name}': expected dtype ${decl.dtype}, got ${dtype}`)
  if (!Array.isArray(dims) || dims.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new InputError(`input '${name}': dims must be an array of non-negative integers, got ${JSON.stringify(dims)}`)
  }
  if (!isTypedArray(data) || !arrayFits(dtype, data!)) {
    throw new InputError(`input '${name}': data must be the TypedArray of a ${dtype} tensor`)
  }
  if (data!.length !== numel(dims)) {
    throw new InputError(`input '${name}': dims [${dims.join(', ')}] need ${numel(dims)} elements, data has ${data!.length}`)
  }
  return t as Tensor
}

/** Validates feeds; returns them in declaration order. */
export function checkFeeds(feeds: unknown, decls: readonly ValueDecl[]): Tensor[] {
  if (typeof feeds !== 'object' || feeds === null || Array.isArray(feeds)) {
    throw new InputError('feeds: expected an object mapping input names to tensors')
  }
  const given = feeds as Record<string, unknown>
  const expected = decls.map((d) => d.name)
  for (const name of Object.keys(given)) {
    if (!expected.includes(name)) throw new InputError(`unknown input '${name}'; the model's inputs are: ${expected.join(', ')}`)
  }
  const bound = new Map<string, { value: number; input: string }>()
  return decls.map((decl) => {
    if (!(decl.name in given)) throw new InputError(`missing input '${decl.name}'; the model's inputs are: ${expected.join(', ')}`)
    const t = checkTensor(decl.name, given[decl.name], decl)
    if (decl.dims === undefined) return t
    if (t.dims.length !== decl.dims.length) {
      throw new ShapeError(`input '${decl.name}': expected rank ${decl.dims.length} [${decl.dims.join(', ')}], got dims [${t.dims.join(', ')}]`)
    }
    decl.dims.forEach((want, i) => {
      const got = t.dims[i]!
      if (typeof want === 'number') {
        if (want !== got) throw new ShapeError(`input '${decl.name}': dim ${i} must be ${want}, got ${got} (dims [${t.dims.join(', ')}])`)
        return
      }
      const prior = bound.get(want)
      if (prior !== undefined && prior.value !== got) {
        throw new ShapeError(
          `input '${decl.name}': dim ${i} ('${want}') is ${got}, but input '${prior.input}' binds '${want}' to ${prior.value}`,
        )
      }
      bound.set(want, { value: got, input: decl.name })
    })
    return t
  })
}
