#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// npm's install hook. The prebuilt binary for this platform (prebuilds/<platform>-<arch>/, found by
// node-gyp-build) is used when it loads here; otherwise (another platform or libc, a binary that does
// not load) the addon is built from source with node-gyp, after a message that says why and what the
// build needs. FLEXPIPE_BUILD_FROM_SOURCE=1 skips the prebuilt binary.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const where = `${process.platform}-${process.arch}`

let reason = 'FLEXPIPE_BUILD_FROM_SOURCE=1'
if (process.env.FLEXPIPE_BUILD_FROM_SOURCE !== '1') {
  try {
    const binary = require('node-gyp-build').path(root)
    require(binary)
    console.log(`flexpipe: using ${relative(root, binary)} (${where}, N-API ${process.versions.napi})`)
    process.exit(0)
  } catch (err) {
    reason = String(err instanceof Error ? err.message : err).split('\n')[0]
  }
}
const shipped = existsSync(join(root, 'prebuilds'))
console.error(
  `flexpipe: ${shipped ? `no prebuilt binary loads on ${where}` : 'no prebuilt binaries here (a checkout)'} (${reason}); ` +
    'building the addon from source with node-gyp. This needs a C++17 compiler, make and python3 ' +
    '(Debian, Raspberry Pi OS: apt-get install build-essential python3; liburing-dev adds io_uring reads) ' +
    'and takes a few minutes.',
)
let gyp = ['node-gyp']
try {
  gyp = [process.execPath, require.resolve('node-gyp/bin/node-gyp.js')]
} catch {}
const r = spawnSync(gyp[0], [...gyp.slice(1), 'rebuild'], { cwd: root, stdio: 'inherit' })
if (r.status !== 0) {
  console.error(`flexpipe: the source build failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}); see node-gyp's output above.`)
  process.exit(1)
}
