// SPDX-License-Identifier: Apache-2.0
// Host-side data of constants: reading a tensor's external data, and the key of a prepacked form.
import { openSync, readSync, closeSync } from 'node:fs'
import { IOError } from '../errors.js'
import { viewArray } from './dtype.js'
import type { ExternalTensor, TensorData, ValueInfo } from './ir.js'
import { isExternal, numel } from './ir.js'
import type { Prepack } from './ops/op-def.js'
import { hostTensor } from './values.js'

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

export function prepackKey(p: Prepack): string {
  return `#${p.transform}(${p.ints.join(',')})`
}
