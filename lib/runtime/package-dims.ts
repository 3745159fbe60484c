// SPDX-License-Identifier: Apache-2.0
// The dim ranges a package was prepared for (manifest meta.dims, written by `flexpipe prepare --dim
// seq_len=8..128`), checked against its graph: every symbolic input dim has a range, every range a dim.
import { PackageError } from '../errors.js'
import { inputSymbols } from '../model/bind-input-dims.js'
import type { Graph } from '../model/ir.js'
import type { PackageDimRange } from './budget-shapes.js'

export function packageDimRanges(dims: unknown, graph: Graph, label: string): Map<string, PackageDimRange> {
  const symbols = inputSymbols(graph)
  const out = new Map<string, PackageDimRange>()
  const corrupt = (what: string): never => {
    throw new PackageError(`${label}: ${what}: the package is corrupt; re-run flexpipe prepare`)
  }
  if (dims !== undefined && (typeof dims !== 'object' || dims === null || Array.isArray(dims))) corrupt('meta.dims is not an object of ranges')
  for (const [name, r] of Object.entries((dims ?? {}) as Record<string, unknown>)) {
    const ok = Array.isArray(r) && r.length === 2 && r.every((v) => Number.isSafeInteger(v) && (v as number) >= 1) && (r[0] as number) <= (r[1] as number)
    if (!ok) corrupt(`meta.dims.${name} is not a range [min, max] of positive integers`)
    if (!symbols.includes(name)) corrupt(`meta.dims names '${name}', which no input has`)
    const [lo, hi] = r as [number, number]
    out.set(name, [lo, hi])
  }
  const missing = symbols.filter((s) => !out.has(s))
  if (missing.length > 0) corrupt(`input dims ${missing.join(', ')} are symbolic but have no range in meta.dims`)
  return out
}
