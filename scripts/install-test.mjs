#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Installs the packed tarball as a user would, on a machine without a compiler, and runs its demo:
//
//   node scripts/install-test.mjs [--arch all|x64|arm64] [--work DIR] [--suite bookworm] [--mirror URL]
//
// 1. `npm pack` (prebuilds/linux-x64 and prebuilds/linux-arm64 must be there: `npm run prebuild`); the
//    tarball's size is printed and must stay <= 30 MB.
// 2. An npm cache holding the tarball's production dependencies, filled on this machine from the registry
//    (`npm install --omit=dev --ignore-scripts` into a scratch folder); the installs below are offline.
// 3. Per architecture, a Debian root file system made by mmdebstrap that holds Node (Debian's nodejs) and
//    what it depends on, nothing else: no compiler, make, python, liburing or libgomp (checked). x64 is the
//    `minbase` variant (a real minimal Debian: sh, coreutils, apt) and runs under chroot; arm64 is
//    extracted without maintainer scripts (no binfmt_misc needed) and its Node runs under qemu-aarch64 -L,
//    with a `node` on PATH that does the same, so npm and the package's install script run as arm64 too.
// 4. In it: npm 10 (from the registry; npm 11 needs Node >= 20.17, bookworm has 18.19) installs the tarball
//    offline, the install script must take the prebuilt binary (no build/ folder appears), and
//    `npx flexpipe demo` must run to its last line ("N/8 within 1.05 x T").
//
// Needs root (mmdebstrap, chroot, bind mounts), mmdebstrap, qemu-user (arm64) and network access to the npm
// registry and a Debian mirror. Prints TAP (one test point per check) and exits non-zero on a failure.
import { spawnSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { values } = parseArgs({
  options: {
    arch: { type: 'string', default: 'all' },
    work: { type: 'string', default: join(root, '.cache', 'install-test') },
    suite: { type: 'string', default: 'bookworm' },
    mirror: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log('usage: node scripts/install-test.mjs [--arch all|x64|arm64] [--work DIR] [--suite bookworm] [--mirror URL]')
  process.exit(0)
}
const arches = values.arch === 'all' ? ['x64', 'arm64'] : [values.arch]
if (!arches.every((a) => a === 'x64' || a === 'arm64')) {
  console.error(`install-test: --arch must be all, x64 or arm64 (got ${values.arch})`)
  process.exit(2)
}
const debArch = { x64: 'amd64', arm64: 'arm64' }
const maxTarballBytes = 30e6
const work = values.work

let n = 0
let failures = 0
function check(ok, what, detail = '') {
  n++
  if (!ok) failures++
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}${detail ? ` # ${detail}` : ''}`)
  return ok
}

/** Runs a command; returns its output; on failure prints the tail and returns undefined. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...opts })
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`
  if (r.status !== 0) {
    console.log(`# ${cmd} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}):`)
    for (const line of out.trim().split('\n').slice(-40)) console.log(`#   ${line}`)
    return undefined
  }
  return out
}

function bail(why) {
  check(false, why)
  console.log(`1..${n}`)
  process.exit(1)
}

/** The mirror apt already uses here (deb822 or one-line sources), else Debian's. */
function debianMirror() {
  if (values.mirror) return values.mirror
  for (const f of ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']) {
    if (!existsSync(f)) continue
    const text = readFileSync(f, 'utf8')
    const m = text.match(/^URIs:\s*(\S+)/m) ?? text.match(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+\S+\s+main/m)
    if (m && !m[1].includes('security')) return m[1]
  }
  return 'http://deb.debian.org/debian'
}

// --- 1. the tarball ---------------------------------------------------------------------------------
mkdirSync(work, { recursive: true })
for (const a of arches) {
  const dir = join(root, 'prebuilds', `linux-${a}`)
  if (!existsSync(dir) || !readdirSync(dir).some((f) => f.endsWith('.node'))) bail(`prebuilds/linux-${a} holds a binary (run \`npm run prebuild\` first)`)
}
for (const f of readdirSync(work)) if (f.endsWith('.tgz')) rmSync(join(work, f))
const packed = run('npm', ['pack', '--pack-destination', work, '--silent'], { cwd: root })
if (packed === undefined) bail('npm pack')
const tgzName = readdirSync(work).find((f) => f.startsWith('flexpipe-') && f.endsWith('.tgz'))
if (!tgzName) bail('npm pack wrote a flexpipe-*.tgz')
const tgz = join(work, tgzName)
const size = statSync(tgz).size
check(size <= maxTarballBytes, `the tarball is at most 30 MB`, `${tgzName}: ${(size / 1e6).toFixed(1)} MB`)
const listing = run('tar', ['tzf', tgz]) ?? ''
for (const a of arches) check(new RegExp(`^package/prebuilds/linux-${a}/[^/]+\\.node$`, 'm').test(listing), `the tarball holds prebuilds/linux-${a}`)
for (const f of ['test/fixtures/spam-encoder/model.safetensors', 'scripts/install.mjs', 'scripts/native-sources.mjs', 'binding.gyp']) {
  check(listing.includes(`package/${f}\n`), `the tarball holds ${f}`)
}

// --- 2. the npm cache and npm 10 --------------------------------------------------------------------
const cache = join(work, 'npm-cache')
const seed = join(work, 'seed')
rmSync(seed, { recursive: true, force: true })
mkdirSync(seed, { recursive: true })
if (run('npm', ['install', '--prefix', seed, '--cache', cache, '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', tgz]) === undefined) bail('the npm cache is filled from the registry')
const npm10 = join(work, 'npm10')
if (!existsSync(join(npm10, 'package', 'bin', 'npm-cli.js'))) {
  rmSync(npm10, { recursive: true, force: true })
  mkdirSync(npm10, { recursive: true })
  if (run('npm', ['pack', 'npm@10', '--pack-destination', npm10, '--silent', '--cache', cache]) === undefined) bail('npm@10 from the registry')
  const t = readdirSync(npm10).find((f) => f.endsWith('.tgz'))
  if (!t || run('tar', ['xzf', join(npm10, t), '-C', npm10]) === undefined) bail('npm@10 unpacked')
}

// --- 3 and 4, per architecture ----------------------------------------------------------------------
const mirror = debianMirror()
for (const arch of arches) {
  const rootfs = join(work, `rootfs-${arch}`)
  const variant = arch === 'x64' ? 'minbase' : 'extract'
  const stamp = join(work, `rootfs-${arch}.ok`)
  if (!existsSync(stamp)) {
    rmSync(rootfs, { recursive: true, force: true })
    const args = [`--variant=${variant}`, `--arch=${debArch[arch]}`, '--include=nodejs', '--mode=root', '--quiet', values.suite, rootfs, mirror]
    console.log(`# mmdebstrap ${args.join(' ')}`)
    if (run('mmdebstrap', args) === undefined) {
      check(false, `${arch}: mmdebstrap made a ${values.suite} root file system`)
      continue
    }
    writeFileSync(stamp, new Date().toISOString())
  }
  const lib = `usr/lib/${arch === 'x64' ? 'x86_64' : 'aarch64'}-linux-gnu`
  const present = ['usr/bin/gcc', 'usr/bin/cc', 'usr/bin/g++', 'usr/bin/make', 'usr/bin/python3', 'usr/bin/node-gyp'].filter((f) => existsSync(join(rootfs, f)))
  const libs = existsSync(join(rootfs, lib)) ? readdirSync(join(rootfs, lib)).filter((f) => /^lib(gomp|uring)\.so/.test(f)) : []
  check(existsSync(join(rootfs, 'usr/bin/node')) && present.length === 0 && libs.length === 0,
    `${arch}: the root file system has Node and no compiler, make, python, node-gyp, libgomp or liburing`,
    [...present, ...libs].join(' '))

  const app = join(rootfs, 'app')
  rmSync(app, { recursive: true, force: true })
  mkdirSync(join(rootfs, 'opt'), { recursive: true })
  mkdirSync(app, { recursive: true })
  // The user's project: npm installs into it (without a package.json npm would look for one in the
  // folders above, and under qemu those are this machine's).
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', private: true }, null, 2)}\n`)
  rmSync(join(rootfs, 'opt', 'npm'), { recursive: true, force: true })
  cpSync(join(npm10, 'package'), join(rootfs, 'opt', 'npm'), { recursive: true })
  rmSync(join(rootfs, 'opt', 'npm-cache'), { recursive: true, force: true })
  cpSync(cache, join(rootfs, 'opt', 'npm-cache'), { recursive: true })
  cpSync(tgz, join(rootfs, 'opt', 'flexpipe.tgz'))
  const npmArgs = ['--offline', '--cache', '/opt/npm-cache', '--no-audit', '--no-fund', '--foreground-scripts']

  let exec // (argv, cwd inside the root) -> output
  const mounts = []
  if (arch === 'x64') {
    for (const [what, type] of [['proc', 'proc'], ['sys', 'sysfs'], ['dev', null]]) {
      const at = join(rootfs, what)
      mkdirSync(at, { recursive: true })
      const ok = type ? run('mount', ['-t', type, what, at]) : run('mount', ['--bind', '/dev', at])
      if (ok !== undefined) mounts.push(at)
    }
    exec = (argv, cwd) =>
      run('chroot', [rootfs, '/usr/bin/env', '-i', 'HOME=/root', 'PATH=/usr/local/bin:/usr/bin:/bin', 'LANG=C.UTF-8', '/bin/sh', '-c', `cd ${cwd} && ${argv.join(' ')}`])
  } else {
    // No chroot: qemu-user maps the loader and libraries into the root (-L); file paths stay this
    // machine's. `node` on PATH is the arm64 Node, so npm's lifecycle scripts run it too.
    const bin = join(work, `bin-${arch}`)
    mkdirSync(bin, { recursive: true })
    writeFileSync(join(bin, 'node'), `#!/bin/sh\nexec qemu-aarch64 -L ${rootfs} ${rootfs}/usr/bin/node "$@"\n`)
    chmodSync(join(bin, 'node'), 0o755)
    exec = (argv, cwd) =>
      run('/bin/sh', ['-c', `cd ${join(rootfs, cwd)} && ${argv.map((a) => a.replace(/^\/(opt|app)\b/, `${rootfs}/$1`)).join(' ')}`], {
        env: { HOME: join(work, `home-${arch}`), PATH: `${bin}:/usr/bin:/bin`, LANG: 'C.UTF-8', FLEXPIPE_CACHE_DIR: join(work, `home-${arch}`, 'cache') },
      })
  }
  try {
    const version = exec(['node', '-p', '"process.arch + \' \' + process.version"'], '/app')
    check(version !== undefined && version.includes(arch), `${arch}: Node runs in the root file system`, version?.trim() ?? '')
    const install = exec(['node', '/opt/npm/bin/npm-cli.js', 'install', ...npmArgs, '/opt/flexpipe.tgz'], '/app')
    check(install !== undefined, `${arch}: npm installs the tarball offline`)
    const pkg = join(app, 'node_modules', 'flexpipe')
    check(install !== undefined && /flexpipe: using prebuilds\/linux-/.test(install) && !existsSync(join(pkg, 'build')),
      `${arch}: the install script takes the prebuilt binary (no source build)`, (install ?? '').match(/flexpipe: [^\n]*/)?.[0] ?? '')
    const demo = exec(['node', '/opt/npm/bin/npx-cli.js', ...npmArgs, 'flexpipe', 'demo'], '/app')
    const last = (demo ?? '').trim().split('\n').pop() ?? ''
    check(demo !== undefined && /\d+\/8 within 1\.05 x T/.test(last), `${arch}: npx flexpipe demo runs`, last)
  } finally {
    for (const at of mounts.reverse()) run('umount', ['--lazy', at])
  }
}
console.log(`1..${n}`)
console.log(`# ${n - failures} passed, ${failures} failed`)
process.exit(failures === 0 ? 0 : 1)
