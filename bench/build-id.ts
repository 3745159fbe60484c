// SPDX-License-Identifier: Apache-2.0
// buildId(): a hash of the code that prepares packages, so benchmarks re-prepare the packages they
// cache in .cache/ when the library changed (an older package may hold other kernel choices, forms or
// quantization) instead of reusing them while they are newer than the model.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { repoRoot } from './models/cases.js'

let memo: string | undefined

/** sha1 of dist/lib's .js files (paths and contents, in name order) and of the native addon in use. */
export function buildId(): string {
  if (memo !== undefined) return memo
  const h = createHash('sha1')
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.js')) h.update(p).update(readFileSync(p))
    }
  }
  walk(join(repoRoot, 'dist', 'lib'))
  const gypBuild = createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string }
  h.update(readFileSync(process.env.FLEXPIPE_ADDON ?? gypBuild.path(repoRoot)))
  memo = h.digest('hex')
  return memo
}
