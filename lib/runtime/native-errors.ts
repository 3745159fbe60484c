// SPDX-License-Identifier: Apache-2.0
// Maps errors thrown or rejected by the addon to flexpipe's error classes, naming graph nodes.
import { DisposedError, FlexpipeError, IOError, NativeError } from '../errors.js'

/** Converts a native error; `opNodes` maps a program's op index to its node name. */
export function fromNative(err: unknown, opNodes?: readonly string[]): FlexpipeError {
  if (err instanceof FlexpipeError) return err
  const e = err as { code?: unknown; message?: unknown }
  const code = typeof e?.code === 'string' ? e.code : 'ERR_FLEXPIPE_INTERNAL'
  let message = typeof e?.message === 'string' ? e.message : String(err)
  if (opNodes) {
    message = message.replace(/^op (\d+) \(([^)]*)\): /, (m, index: string, op: string) => {
      const node = opNodes[Number(index)]
      return node === undefined ? m : `node '${node}' (native ${op}): `
    })
  }
  if (code === 'ERR_FLEXPIPE_IO') return new IOError(message, { cause: err })
  if (code === 'ERR_FLEXPIPE_DISPOSED') return new DisposedError(message)
  return new NativeError(code, message)
}
