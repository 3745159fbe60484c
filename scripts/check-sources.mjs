// SPDX-License-Identifier: Apache-2.0
// Fails when a native source file belongs to no group of native/sources.json (it would be built by
// neither binding.gyp nor CMakeLists.txt) or to two groups (it would be built twice).
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { root, sourcesOf } from './native-sources.mjs'

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]))
}

export function checkSources() {
  const groups = Object.keys(JSON.parse(readFileSync(join(root, 'native/sources.json'), 'utf8'))).filter((g) => g !== '//')
  const owner = new Map()
  const problems = []
  for (const g of groups) {
    for (const f of sourcesOf(g)) {
      if (owner.has(f)) problems.push(`${f} is in groups ${owner.get(f)} and ${g}`)
      owner.set(f, g)
    }
  }
  for (const f of walk(join(root, 'native')).map((p) => relative(root, p))) {
    if (f.endsWith('.cc') && !owner.has(f)) problems.push(`${f} is in no group of native/sources.json`)
  }
  return problems
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const problems = checkSources()
  for (const p of problems) console.error(p)
  process.exit(problems.length ? 1 : 0)
}
