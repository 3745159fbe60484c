#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Builds the release prebuild of the addon with prebuildify (STYLE.md §9), the way we ship it:
//   node scripts/prebuild.mjs                 both (`npm run prebuild`, what the package ships)
//   node scripts/prebuild.mjs --arch arm64    linux-arm64, cross-compiled with Debian's
//                                                g++-aarch64-linux-gnu -> prebuilds/linux-arm64/
//   node scripts/prebuild.mjs --arch x64      linux-x64 with the host compiler -> prebuilds/linux-x64/
// (`npm run build:arm64` = `npm run prebuildify:arm64`, and `npm run prebuildify:x64`).
//
// prebuildify always runs `node-gyp rebuild` in its working directory, which would wipe the dev build in
// build/Release. So it runs in a staging directory (build-arm64/, .cache/prebuild-x64/) holding symlinks to
// binding.gyp, package.json, native/ and scripts/; node-gyp's build/ is created there, and prebuildify
// writes its output into <repo>/prebuilds/<platform>-<arch>/ (--out).
//
// Node headers come from the local installation (nodedir=/usr, /usr/include/node); node-gyp's dist-url
// is pointed at an unreachable address so that an attempt to download headers fails instead of
// silently fetching. N-API is ABI-stable, so the v20 headers here serve the arm64 Node 22 as well.
// liburing is not installed for arm64, so scripts/has-liburing.mjs makes the arm64 build use the
// pread reader. OpenMP (-fopenmp) links the cross toolchain's libgomp.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

const { values } = parseArgs({
  options: {
    arch: { type: 'string', default: 'all' },
    jobs: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log('usage: node scripts/prebuild.mjs [--arch all|x64|arm64] [--jobs N]   (all: x64, then arm64)')
  process.exit(0)
}
if (values.arch === 'all') {
  // `npm run prebuild`: both shipped binaries, one after the other (each uses every core).
  for (const arch of ['x64', 'arm64']) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--arch', arch, ...(values.jobs ? ['--jobs', values.jobs] : [])], { stdio: 'inherit' })
    if (r.status !== 0) process.exit(r.status ?? 1)
  }
  process.exit(0)
}

const targets = {
  arm64: { triple: 'aarch64-linux-gnu', stage: join(root, 'build-arm64'), elf: /ELF 64-bit LSB shared object, ARM aarch64/ },
  x64: { triple: 'x86_64-linux-gnu', stage: join(root, '.cache', 'prebuild-x64'), elf: /ELF 64-bit LSB shared object, x86-64/ },
}
const arch = values.arch
const target = targets[arch]
if (!target) {
  console.error(`build: --arch must be one of ${Object.keys(targets).join(', ')}, got ${arch}`)
  process.exit(2)
}
if (process.platform !== 'linux') {
  console.error('build: only linux targets are built by this script')
  process.exit(2)
}
const cross = arch !== process.arch
const nodedir = process.env.npm_config_nodedir || '/usr'
if (!existsSync(join(nodedir, 'include', 'node', 'node_api.h'))) {
  console.error(`build: no Node headers in ${nodedir}/include/node (nodedir); install them (Debian: libnode-dev / nodejs) instead of downloading`)
  process.exit(1)
}

function which(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0
}

// Toolchain: for a foreign arch, every compiler/linker/archiver gyp uses for the target is the cross
// tool; the *_host variables stay the host's (gyp builds nothing for the host here).
const env = { ...process.env }
let stripBin = 'strip'
if (cross) {
  const t = target.triple
  const tools = { CC: `${t}-gcc`, CXX: `${t}-g++`, LINK: `${t}-g++`, AR: `${t}-ar` }
  for (const [k, tool] of Object.entries(tools)) {
    if (!which(tool)) {
      console.error(`build: ${tool} not found (Debian: apt-get install g++-${t} binutils-${t})`)
      process.exit(1)
    }
    env[k] = tool
  }
  stripBin = `${t}-strip`
  if (!which(stripBin)) {
    console.error(`build: ${stripBin} not found (Debian: apt-get install binutils-${t})`)
    process.exit(1)
  }
  // liburing for the target, unpacked by scripts/arm64/sysroot.mjs (has-liburing.mjs looks there too).
  const sysroot = join(root, '.cache', `${arch}-sysroot`)
  if (existsSync(join(sysroot, 'usr', 'lib', t, 'liburing.a'))) {
    env.CXXFLAGS = `${env.CXXFLAGS ?? ''} -I${join(sysroot, 'usr', 'include')}`.trim()
    env.LDFLAGS = `${env.LDFLAGS ?? ''} -L${join(sysroot, 'usr', 'lib', t)}`.trim()
  }
  env.CC_host ??= 'gcc'
  env.CXX_host ??= 'g++'
  env.LINK_host ??= 'g++'
  env.AR_host ??= 'ar'
}
env.npm_config_nodedir = nodedir
env.npm_config_dist_url = 'http://127.0.0.1:9/no-header-downloads' // fail fast rather than download headers
env.JOBS = values.jobs ?? env.JOBS ?? 'max'

// Staging directory: symlinks to what binding.gyp reads (relative paths, resolved against the .gyp dir).
const stage = target.stage
mkdirSync(stage, { recursive: true })
for (const name of ['binding.gyp', 'package.json', 'native', 'scripts']) {
  const link = join(stage, name)
  const to = relative(stage, join(root, name))
  let ok = false
  try {
    ok = lstatSync(link).isSymbolicLink() && readlinkSync(link) === to
  } catch {}
  if (!ok) {
    rmSync(link, { recursive: true, force: true })
    symlinkSync(to, link)
  }
}

const outDir = join(root, 'prebuilds', `linux-${arch}`)
mkdirSync(outDir, { recursive: true })
for (const f of readdirSync(outDir)) if (f.endsWith('.node') || f.startsWith('libgomp')) rmSync(join(outDir, f)) // no stale binary survives a failed build

const prebuildify = join(root, 'node_modules', 'prebuildify', 'bin.js')
const args = [
  prebuildify,
  '--napi',
  '--strip',
  '--tag-libc',
  '--arch', arch,
  '--platform', 'linux',
  '--target', `node@${process.versions.node}`, // the local headers' version (else node-abi's newest)
  '--strip-bin', stripBin,
  '--out', root,
  '--cache', join(stage, '.prebuildify-devdir'), // node-gyp devdir: stays empty with nodedir set
  stage,
]
console.log(`# prebuildify linux-${arch}${cross ? ` (cross: ${env.CXX})` : ''}, nodedir=${nodedir}, staging in ${relative(root, stage)}/`)
const t0 = performance.now()
const r = spawnSync(process.execPath, args, { cwd: root, env, stdio: 'inherit' })
const seconds = ((performance.now() - t0) / 1000).toFixed(1)
if (r.status !== 0) {
  console.error(`build: prebuildify failed for linux-${arch} (exit ${r.status ?? r.signal}) after ${seconds} s`)
  process.exit(1)
}

const built = readdirSync(outDir).filter((f) => f.endsWith('.node'))
if (built.length !== 1) {
  console.error(`build: expected one .node in ${relative(root, outDir)}, found ${built.length}`)
  process.exit(1)
}
const file = join(outDir, built[0])
const kind = spawnSync('file', ['-b', file], { encoding: 'utf8' })
const desc = kind.stdout?.trim() ?? ''
console.log(`${relative(root, file)}: ${desc || '(file(1) not available)'}`)
if (kind.status === 0 && !target.elf.test(desc)) {
  console.error(`build: ${relative(root, file)} is not a linux-${arch} ELF shared object`)
  process.exit(1)
}
const readelf = cross ? `${target.triple}-readelf` : 'readelf'
const dyn = spawnSync(readelf, ['-d', file], { encoding: 'utf8' })
if (dyn.status === 0) {
  const needed = [...dyn.stdout.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1])
  console.log(`needs: ${needed.join(' ')}`)
  // liburing is linked in (binding.gyp). OpenMP's runtime cannot be: Debian's libgomp.a holds
  // local-exec TLS, which a shared object may not use. So the toolchain's libgomp.so.1 ships beside the
  // binary, found through its RUNPATH $ORIGIN (binding.gyp), and a slim image needs no libgomp1 package.
  if (needed.some((n) => /^liburing\.so/.test(n))) {
    console.error(`build: ${relative(root, file)} needs liburing.so at load; it is linked statically (binding.gyp)`)
    process.exit(1)
  }
  if (needed.includes('libgomp.so.1')) {
    if (!/\((RUNPATH|RPATH)\)\s+Library (runpath|rpath): \[\$ORIGIN\]/.test(dyn.stdout)) {
      console.error(`build: ${relative(root, file)} needs libgomp.so.1 but has no RUNPATH $ORIGIN to find the copy beside it`)
      process.exit(1)
    }
    const cxx = cross ? env.CXX : 'g++'
    const gomp = spawnSync(cxx, ['-print-file-name=libgomp.so.1'], { encoding: 'utf8' }).stdout.trim()
    if (!gomp || !existsSync(gomp)) {
      console.error(`build: ${cxx} -print-file-name=libgomp.so.1 found no libgomp.so.1 (Debian: apt-get install libgomp1${cross ? `-${arch}-cross` : ''})`)
      process.exit(1)
    }
    copyFileSync(gomp, join(outDir, 'libgomp.so.1'))
    spawnSync(stripBin, ['--strip-unneeded', join(outDir, 'libgomp.so.1')])
    console.log(`shipped beside it: ${relative(root, join(outDir, 'libgomp.so.1'))} (${(statSync(join(outDir, 'libgomp.so.1')).size / 1024).toFixed(0)} KiB, from ${gomp})`)
  }
}
// The newest glibc symbol version it needs: at most Debian bookworm's / Raspberry Pi OS bookworm's 2.36.
const syms = spawnSync(readelf, ['--dyn-syms', '--wide', file], { encoding: 'utf8' })
if (syms.status === 0) {
  const versions = [...syms.stdout.matchAll(/@GLIBC_(\d+)\.(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])])
  const [major, minor] = versions.reduce((a, b) => (b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]) ? b : a), [0, 0])
  console.log(`newest glibc symbol: GLIBC_${major}.${minor} (bookworm has 2.36)`)
  if (major > 2 || (major === 2 && minor > 36)) {
    console.error(`build: ${relative(root, file)} needs GLIBC_${major}.${minor}, newer than bookworm's 2.36: build on bookworm`)
    process.exit(1)
  }
}
console.log(`# built linux-${arch} in ${seconds} s`)
