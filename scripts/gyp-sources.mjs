// SPDX-License-Identifier: Apache-2.0
// Prints one group of native/sources.json, one path per line, for binding.gyp's <!@(...) expansion.
import { sourcesOf } from './native-sources.mjs'

const group = process.argv[2]
if (!group) {
  console.error('usage: node scripts/gyp-sources.mjs <group>')
  process.exit(2)
}
for (const f of sourcesOf(group)) console.log(f)
