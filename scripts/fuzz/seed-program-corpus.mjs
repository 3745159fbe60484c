#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpus of native/fuzz/program_fuzz.cc into test/fuzz/corpus/program/: for every native
// op, a program that decodes (three float32 tensors of 4 elements in the activation region, one op with two
// inputs, one output and two ints), as the harness reads bytes (byte 0: mode 0; then one signed byte per
// word). The fuzzer mutates these into programs that reach each op's argument checks.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from '../native-sources.mjs'
import { nativeOpNames } from '../../dist/lib/model/ops/native-op-codes.js'

const dir = join(root, 'test', 'fuzz', 'corpus', 'program')
mkdirSync(dir, { recursive: true })
const tensor = (offset, dtype, dims) => [1, offset, dtype, dims.length, ...dims, ...new Array(8 - dims.length).fill(0)]
nativeOpNames.forEach((name, code) => {
  const words = [1, 3, 1, ...tensor(0, 1, [4]), ...tensor(32, 1, [4]), ...tensor(64, 1, [2, 2]), code, 2, 1, 2, 0, 0, 1, 2, 0, 1]
  writeFileSync(join(dir, `${String(code).padStart(2, '0')}-${name}`), Uint8Array.from([0, ...words.map((w) => w & 0xff)]))
})
console.log(`${nativeOpNames.length} seeds in ${dir}`)
