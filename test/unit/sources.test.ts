// SPDX-License-Identifier: Apache-2.0
// Every native source file is built by both builds exactly once (native/sources.json is the one list).
import t from 'tap'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { repoRoot } from '../helpers/data.js'

t.test('every .cc under native/ belongs to exactly one source group', async (t) => {
  const mod = (await import(pathToFileURL(join(repoRoot, 'scripts', 'check-sources.mjs')).href)) as { checkSources: () => string[] }
  t.same(mod.checkSources(), [])
})
