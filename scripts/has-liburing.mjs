// SPDX-License-Identifier: Apache-2.0
// Prints 1 when liburing headers and library exist for the target architecture, else 0 (binding.gyp, CMake).
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const arch = process.argv[2] ?? process.arch
const native = arch === process.arch
const triple = { arm64: 'aarch64-linux-gnu', x64: 'x86_64-linux-gnu' }[arch]
// Cross builds need the target's static library: in the cross toolchain's tree, or unpacked from
// Debian's liburing-dev:arm64 into .cache/arm64-sysroot by scripts/arm64/sysroot.mjs (prebuild.mjs then
// adds its include and library folders).
const sysroot = join(dirname(fileURLToPath(import.meta.url)), '..', '.cache', 'arm64-sysroot')
const headers = native
  ? ['/usr/include/liburing.h']
  : [`/usr/include/${triple}/liburing.h`, `/usr/${triple}/include/liburing.h`, join(sysroot, 'usr', 'include', 'liburing.h')]
const libs = native ? [] : [`/usr/${triple}/lib/liburing.a`, join(sysroot, 'usr', 'lib', triple, 'liburing.a')]
const found =
  process.platform === 'linux' && !process.env.FLEXPIPE_NO_URING && headers.some((h) => existsSync(h)) && (native || libs.some((l) => existsSync(l)))
process.stdout.write(found ? '1' : '0')
