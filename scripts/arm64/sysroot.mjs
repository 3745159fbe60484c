#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The arm64 prebuild's liburing: Debian's liburing-dev:arm64 unpacked into .cache/arm64-sysroot/ (headers
// in usr/include, liburing.a in usr/lib/aarch64-linux-gnu), which scripts/has-liburing.mjs and
// scripts/prebuild.mjs then use for the cross build. Not installed with dpkg: a multiarch libc6:arm64
// beside the cross toolchain's breaks qemu-aarch64 -L /usr/aarch64-linux-gnu (the arm64 loader then
// mixes the two libcs). Needs arm64 among apt's architectures (`dpkg --add-architecture arm64 &&
// apt-get update`); downloads one Debian package.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const arm64Sysroot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.cache', 'arm64-sysroot')

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lib = join(arm64Sysroot, 'usr', 'lib', 'aarch64-linux-gnu', 'liburing.a')
  if (existsSync(lib)) {
    console.log(`${lib}: there`)
    process.exit(0)
  }
  const tmp = mkdtempSync(join(tmpdir(), 'flexpipe-debs-'))
  const dl = spawnSync('apt-get', ['download', 'liburing-dev:arm64'], { cwd: tmp, encoding: 'utf8' })
  const deb = readdirSync(tmp).find((f) => f.endsWith('_arm64.deb'))
  if (dl.status !== 0 || !deb) {
    console.error(`sysroot: apt-get download liburing-dev:arm64 failed (is arm64 among apt's architectures? dpkg --add-architecture arm64 && apt-get update)\n${dl.stderr}`)
    process.exit(1)
  }
  mkdirSync(arm64Sysroot, { recursive: true })
  const x = spawnSync('dpkg-deb', ['-x', join(tmp, deb), arm64Sysroot], { encoding: 'utf8' })
  rmSync(tmp, { recursive: true, force: true })
  if (x.status !== 0 || !existsSync(lib)) {
    console.error(`sysroot: dpkg-deb -x ${deb} failed\n${x.stderr}`)
    process.exit(1)
  }
  console.log(`${lib}: from ${deb}`)
}
