// SPDX-License-Identifier: Apache-2.0
// The open() options `dims` and `buckets` of an ONNX model: the range each symbolic input dim may take,
// and optionally its bucket ceilings (lib/plan/dynamic/shape-buckets.ts), checked against the model.
import { ArgumentError, OptionError } from '../errors.js'
import type { Graph } from '../model/ir.js'
import { inputSymbols } from '../model/bind-input-dims.js'
import { checkDimRange, type DimRange } from '../plan/dynamic/shape-buckets.js'

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

/** The declared ranges by dim name; throws OptionError for a dim the model does not have. */
export function checkDimRanges(dims: unknown, buckets: unknown, graph: Graph): Map<string, Required<DimRange>> {
  const out = new Map<string, Required<DimRange>>()
  if (dims === undefined && buckets === undefined) return out
  if (dims !== undefined && !isRecord(dims)) throw new ArgumentError(`dims: expected an object such as { seq_len: [1, 128] }, got ${JSON.stringify(dims)}`)
  if (buckets !== undefined && !isRecord(buckets)) throw new ArgumentError(`buckets: expected an object such as { seq_len: [16, 32, 64, 128] }, got ${JSON.stringify(buckets)}`)
  const symbols = new Set(inputSymbols(graph))
  const known = symbols.size === 0 ? 'it has none' : `its symbolic dims are ${[...symbols].join(', ')}`
  for (const name of Object.keys({ ...dims, ...buckets })) {
    if (!symbols.has(name)) throw new OptionError(['dims'], `dims: the model has no symbolic input dim '${name}'; ${known}`)
    const range = (dims as Record<string, unknown> | undefined)?.[name]
    if (!Array.isArray(range) || range.length !== 2) throw new ArgumentError(`dims.${name}: expected [min, max], got ${JSON.stringify(range)}${range === undefined ? ' (buckets need the dim declared in dims)' : ''}`)
    const ceilings = (buckets as Record<string, unknown> | undefined)?.[name]
    if (ceilings !== undefined && !Array.isArray(ceilings)) throw new ArgumentError(`buckets.${name}: expected an array of ceilings, got ${JSON.stringify(ceilings)}`)
    out.set(name, checkDimRange(name, { min: range[0] as number, max: range[1] as number, ceilings: ceilings as number[] | undefined }))
  }
  return out
}
