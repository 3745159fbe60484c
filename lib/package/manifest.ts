// SPDX-License-Identifier: Apache-2.0
// Decodes and validates a package manifest: JSON, schema (every field and type), then blob layout
// (alignment, bounds, overlap) against the file, so nothing in it is used before it is checked.
import { PackageError } from '../errors.js'
import { dtypeBytes, isDType } from '../model/dtype.js'
import { padToBlob, blobAlignment, formatVersion, type BlobEntry, type PackageManifest } from './format.js'

export const corrupt = 'the package is corrupt; re-run flexpipe prepare'
export const truncated = 'the package is truncated; re-run flexpipe prepare'

const manifestFields = new Set(['formatVersion', 'producer', 'created', 'graph', 'blobs', 'meta'])
const blobFields = new Set(['name', 'offset', 'length', 'paddedLength', 'crc32', 'dtype', 'dims', 'kind', 'group'])

type Fail = (message: string, blob?: string) => never

const failWith =
  (label: string): Fail =>
  (message, blob) => {
    throw new PackageError(`${label}: ${message}`, blob === undefined ? undefined : { blob })
  }

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v)?.slice(0, 80) ?? String(v))

/** Parses manifest bytes (UTF-8 JSON) and checks its schema; `label` prefixes every message. */
export function decodeManifest(bytes: Uint8Array, label: string): PackageManifest {
  const fail = failWith(label)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return fail(`the manifest is not valid UTF-8: ${corrupt}`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return fail(`the manifest is not JSON (${(err as Error).message}): ${corrupt}`)
  }
  return checkManifest(value, fail)
}

function checkManifest(m: unknown, fail: Fail): PackageManifest {
  if (!isObject(m)) return fail(`the manifest must be a JSON object, got ${show(m)}: ${corrupt}`)
  const v = m.formatVersion
  if (!isCount(v)) return fail(`manifest field 'formatVersion' must be an integer, got ${show(v)}: ${corrupt}`)
  if (v !== formatVersion) {
    return fail(
      `the manifest is format version ${v}, but this flexpipe reads format version ${formatVersion}: ` +
        're-run flexpipe prepare with this flexpipe, or open the package with the flexpipe that wrote it',
    )
  }
  for (const key of Object.keys(m)) {
    if (manifestFields.has(key)) continue
    fail(`unknown manifest field '${key}' (format version ${v} has ${[...manifestFields].join(', ')}): ${corrupt}`)
  }
  const field = (key: string, ok: boolean, want: string): void => {
    if (!ok) fail(`manifest field '${key}' must be ${want}, got ${show(m[key])}: ${corrupt}`)
  }
  field('producer', typeof m.producer === 'string', 'a string')
  field('created', typeof m.created === 'string' && !Number.isNaN(Date.parse(m.created)), 'an ISO 8601 date string')
  field('graph', Object.hasOwn(m, 'graph'), 'present (any JSON value)')
  field('meta', isObject(m.meta), 'a JSON object')
  field('blobs', Array.isArray(m.blobs), 'an array')
  const blobs = (m.blobs as unknown[]).map((b, i) => checkBlob(b, i, fail))
  const seen = new Map<string, number>()
  blobs.forEach((b, i) => {
    const first = seen.get(b.name)
    if (first !== undefined) fail(`blob name '${b.name}' appears twice (blobs[${first}] and blobs[${i}]): ${corrupt}`, b.name)
    seen.set(b.name, i)
  })
  return m as unknown as PackageManifest
}

function checkBlob(b: unknown, i: number, fail: Fail): BlobEntry {
  if (!isObject(b)) return fail(`manifest blobs[${i}] must be a JSON object, got ${show(b)}: ${corrupt}`)
  const named = typeof b.name === 'string' && b.name.length > 0
  const name = named ? (b.name as string) : undefined
  const where = named ? `blob '${name}' (blobs[${i}])` : `manifest blobs[${i}]`
  const field = (key: string, ok: boolean, want: string): void => {
    if (!ok) fail(`${where}: field '${key}' must be ${want}, got ${show(b[key])}: ${corrupt}`, name)
  }
  field('name', named, 'a non-empty string')
  for (const key of Object.keys(b)) {
    if (!blobFields.has(key)) fail(`${where}: unknown field '${key}': ${corrupt}`, name)
  }
  for (const key of ['offset', 'length', 'paddedLength']) field(key, isCount(b[key]), 'a non-negative integer')
  field('crc32', isCount(b.crc32) && (b.crc32 as number) <= 0xffffffff, 'an integer 0 ..= 0xffffffff')
  field('dtype', b.dtype === undefined || isDType(b.dtype), 'a dtype name (float32, int8, ...) or absent')
  const dimsOk = b.dims === undefined || (Array.isArray(b.dims) && b.dims.every(isCount))
  field('dims', dimsOk, 'an array of non-negative integers or absent')
  field('kind', b.kind === undefined || typeof b.kind === 'string', 'a string or absent')
  field('group', b.group === undefined || typeof b.group === 'string', 'a string or absent')
  const e = b as unknown as BlobEntry
  if (e.paddedLength !== padToBlob(e.length)) {
    const want = `its length ${e.length} rounded up to ${blobAlignment} (${padToBlob(e.length)})`
    fail(`${where}: paddedLength ${e.paddedLength} is not ${want}: ${corrupt}`, name)
  }
  if (e.dtype !== undefined && e.dims !== undefined) {
    const want = e.dims.reduce((n, d) => n * d, 1) * dtypeBytes(e.dtype)
    const tensor = `${e.dtype} [${e.dims.join(', ')}]`
    if (want !== e.length) fail(`${where}: ${tensor} is ${want} bytes, but its length is ${e.length}: ${corrupt}`, name)
  }
  return e
}

/**
 * Checks where the blobs lie: aligned, after the header and manifest (`dataStart`), inside the file
 * (`fileSize`), and not overlapping each other. Empty blobs occupy no bytes and overlap nothing.
 */
export function checkLayout(blobs: readonly BlobEntry[], dataStart: number, fileSize: number, label: string): void {
  const fail = failWith(label)
  for (const b of blobs) {
    const at = `blob '${b.name}'`
    if (b.offset % blobAlignment !== 0) {
      fail(`${at} starts at byte ${b.offset}, which is not a multiple of ${blobAlignment}: ${corrupt}`, b.name)
    }
    if (b.offset < dataStart) {
      fail(`${at} starts at byte ${b.offset}, inside the header and manifest (which end at byte ${dataStart}): ${corrupt}`, b.name)
    }
    const end = b.offset + b.paddedLength
    if (end > fileSize) {
      fail(`${at} ends at byte ${end} past the end of the file (size ${fileSize}): ${truncated}`, b.name)
    }
  }
  const placed = blobs.filter((b) => b.paddedLength > 0).sort((a, b) => a.offset - b.offset)
  for (let i = 1; i < placed.length; i++) {
    const prev = placed[i - 1]!
    const cur = placed[i]!
    if (cur.offset < prev.offset + prev.paddedLength) {
      fail(
        `blob '${cur.name}' [${cur.offset}, ${cur.offset + cur.paddedLength}) overlaps blob '${prev.name}' ` +
          `[${prev.offset}, ${prev.offset + prev.paddedLength}): ${corrupt}`,
        cur.name,
      )
    }
  }
}
