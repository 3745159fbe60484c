// SPDX-License-Identifier: Apache-2.0
// Byte sizes on the command line: 100MB (10^6), 96MiB (2^20), 1.5GB, or a plain byte count.
import { ArgumentError } from '../errors.js'

const units: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 }

export function parseBytes(text: string, what: string): number {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*$/i.exec(text)
  const scale = m === null ? undefined : units[m[2]!.toLowerCase()]
  if (m === null || scale === undefined) throw new ArgumentError(`${what}: expected a size such as 100MB, 96MiB or 104857600, got '${text}'`)
  const bytes = Math.round(Number(m[1]) * scale)
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new ArgumentError(`${what}: ${text} is not a positive size`)
  return bytes
}

export function formatMB(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`
}
