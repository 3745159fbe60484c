// SPDX-License-Identifier: Apache-2.0
// Prints one group of native/sources.json as a CMake list (semicolon-separated) for CMakeLists.txt.
import { sourcesOf } from './native-sources.mjs'

process.stdout.write(sourcesOf(process.argv[2] ?? '').join(';'))
