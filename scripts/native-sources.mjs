// SPDX-License-Identifier: Apache-2.0
// Expands native/sources.json into file lists: the one place both builds get their sources from.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')

function walk(dir) {
  const out = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...walk(p))
    else out.push(p)
  }
  return out
}

function globToRegExp(glob) {
  let re = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*'
      i++
      if (glob[i + 1] === '/') i++
    } else if (c === '*') re += '[^/]*'
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}

const all = walk(join(root, 'native')).map((p) => relative(root, p).split('\\').join('/'))

/** Sorted, de-duplicated source paths (relative to the package root) of one group. */
export function sourcesOf(group) {
  const spec = JSON.parse(readFileSync(join(root, 'native/sources.json'), 'utf8'))
  const patterns = spec[group]
  if (!Array.isArray(patterns)) throw new Error(`native/sources.json has no group '${group}'`)
  const files = new Set()
  for (const pattern of patterns) {
    const re = globToRegExp(pattern)
    for (const f of all) if (re.test(f)) files.add(f)
  }
  return [...files].sort()
}
