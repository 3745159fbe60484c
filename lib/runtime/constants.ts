// SPDX-License-Identifier: Apache-2.0
// Host-side preparation of constants for the arena: reading external data, running prepacks.
import { openSync, readSync, closeSync } from 'node:fs'
import { IOError } from '../errors.js'
import { dtypeCode, dtypeFromCode, viewArray, type DType } from '../model/dtype.js'
import type { ExternalTensor, TensorData, ValueInfo } from '../model/ir.js'
import { isExternal, numel } from '../model/ir.js'
import type { Prepack } from '../model/ops/op-def.js'
import { hostTensor } from '../model/values.js'
import { binding } from '../native/binding.js'
import { fromNative } from './native-errors.js'

/** Reads an external tensor into host memory (used when it must be transformed before placing). */
export function readExternal(t: ExternalTensor): TensorData {
  const bytes = new Uint8Array(t.length)
  let fd: number | undefined
  try {
    fd = openSync(t.path, 'r')
    let done = 0
    while (done < t.length) {
      const n = readSync(fd, bytes, done, t.length - done, t.offset + done)
      if (n === 0) throw new Error(`unexpected end of file at ${t.offset + done}`)
      done += n
    }
  } catch (err) {
    throw new IOError(`failed to read external data ${t.path}: ${(err as Error).message}`, { cause: err })
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
  return { dtype: t.dtype, dims: t.dims, data: viewArray(t.dtype, bytes.buffer, 0, numel(t.dims as number[])) }
}

/** The host tensor of a constant value, reading external data if needed. */
export function constantHost(v: ValueInfo): TensorData {
  const t = v.tensor !== undefined && isExternal(v.tensor) ? readExternal(v.tensor) : hostTensor(v)
  if (t === undefined) throw new Error('constantHost: value is not a constant')
  return t
}

/** Runs a native prepack transform on a host tensor. */
export function runPrepack(t: TensorData, p: Prepack, node: string): TensorData {
  try {
    const r = binding().prepack(p.transform, { dtype: dtypeCode(t.dtype), dims: t.dims, data: t.data }, p.ints)
    const dtype = dtypeFromCode(r.dtype) as DType
    return { dtype, dims: r.dims, data: viewArray(dtype, r.data, 0, numel(r.dims)) }
  } catch (err) {
    throw fromNative(err, [node])
  }
}

export function prepackKey(p: Prepack): string {
  return `#${p.transform}(${p.ints.join(',')})`
}
