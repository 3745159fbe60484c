#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Builds the native libFuzzer targets (the 'fuzz' group of native/sources.json) with clang, AddressSanitizer and
// UndefinedBehaviorSanitizer (issue 40): the engine's sources from native/sources.json (the baseline
// group, and on x86-64 the AVX2 and AVX-512 groups with their flags; no OpenMP, no liburing: kernels run
// serially, files are read with pread), each target linked with -fsanitize=fuzzer. Objects are cached in
// .cache/fuzz/obj by source and flags; binaries go to .cache/fuzz/<target>.
// Needs Debian's clang, libfuzzer-14-dev and libclang-rt-14-dev.
//
//   node scripts/fuzz/build-native.mjs [target ...]      # default: every native/fuzz/*_fuzz.cc
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { arch } from 'node:os'
import { basename, join } from 'node:path'
import { root, sourcesOf } from '../native-sources.mjs'

const out = join(root, '.cache', 'fuzz')
const objDir = join(out, 'obj')
mkdirSync(objDir, { recursive: true })
const cxx = process.env.CXX_FUZZ ?? 'clang++'
const common = ['-std=c++17', '-g', '-O1', '-fno-omit-frame-pointer', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined', '-fno-exceptions', `-I${join(root, 'native')}`]
const groups = [['engine', []]]
if (arch() === 'x64') groups.push(['avx2', ['-mavx2', '-mfma', '-mf16c']], ['avx512', ['-mavx512f', '-mavx2', '-mfma', '-mf16c']])

/** The newest header's time: an object older than it or than its source is compiled again. */
const headersTime = Math.max(...execFileSync('find', [join(root, 'native'), '-name', '*.h'], { encoding: 'utf8' }).trim().split('\n').map((h) => statSync(h).mtimeMs))

function compile(src, flags) {
  const obj = join(objDir, `${src.replace(/[/.]/g, '_')}.o`)
  const path = join(root, src)
  if (!existsSync(obj) || statSync(obj).mtimeMs < Math.max(statSync(path).mtimeMs, headersTime)) {
    execFileSync(cxx, [...common, ...flags, '-fsanitize=fuzzer-no-link', '-c', path, '-o', obj], { stdio: 'inherit' })
  }
  return obj
}

const objects = []
for (const [group, flags] of groups) for (const src of sourcesOf(group)) objects.push(compile(src, flags))
const targets = process.argv.slice(2).length > 0 ? process.argv.slice(2) : sourcesOf('fuzz').map((f) => basename(f, '.cc'))
for (const t of targets) {
  const bin = join(out, t)
  execFileSync(cxx, [...common, '-fsanitize=fuzzer', join(root, 'native', 'fuzz', `${t}.cc`), ...objects, '-o', bin, '-lpthread'], { stdio: 'inherit' })
  console.log(`built ${bin}`)
}
