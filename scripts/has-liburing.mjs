// SPDX-License-Identifier: Apache-2.0
// Prints 1 when liburing headers and library exist for the target architecture, else 0 (binding.gyp, CMake).
import { existsSync } from 'node:fs'

const arch = process.argv[2] ?? process.arch
const native = arch === process.arch
const triple = { arm64: 'aarch64-linux-gnu', x64: 'x86_64-linux-gnu' }[arch]
const headers = native
  ? ['/usr/include/liburing.h']
  : [`/usr/include/${triple}/liburing.h`, `/usr/${triple}/include/liburing.h`]
const found = process.platform === 'linux' && !process.env.FLEXPIPE_NO_URING && headers.some((h) => existsSync(h))
process.stdout.write(found ? '1' : '0')
