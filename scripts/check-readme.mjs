#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Runs the README's code blocks as a newcomer would, in order, from the repository root, and fails if
// any of them fails: every command in the README must run as written on a fresh clone.
//
// A block is marked by the words after the language in its opening fence:
//   ```sh runnable     run with `bash -e` (its own shell; a failing command fails the block)
//   ```js runnable     written to .cache/check-readme/block-<line>.mjs and run with `node`. The file is
//                      inside the repository, so `import ... from 'flexpipe'` resolves to this checkout
//                      through the package's self-reference (package.json "name" + "exports"), as it
//                      would from node_modules in a user's project; every js block checks that.
//   ```sh setup        the two set-up commands, `apt-get update && apt-get install -y <packages> &&
//                      npm ci && <command>`. They are not run again: CI (.ci/run) installs the system
//                      packages and runs `npm ci` before this script. Checked instead: the form; every
//                      package is in .ci/run's apt-get install list; .ci/run runs `npm ci`; and
//                      <command>: `npm test` must be what .ci/run runs (it has just run it), any other
//                      command (`npm run demo`) is run here with `bash -e`.
//   ```text usage      must equal what `flexpipe --help` prints (lib/cli/main.ts).
// Any other sh, bash or js block fails the check: each one is either run or marked as something else.
// Blocks run with TMPDIR set to .cache/check-readme/tmp (removed afterwards), so snippets that make
// temporary packages with mkdtemp(tmpdir()) or `mktemp -d` leave nothing behind.
//
// Prints one TAP-style line per block (`ok N - ...` / `not ok N - ...`, with the block's output) and a
// summary; exits 1 on any failure. Usage: node scripts/check-readme.mjs [README.md]
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const readmePath = process.argv[2] ?? join(root, 'README.md')
const work = join(root, '.cache', 'check-readme')
const tmp = join(work, 'tmp')
const timeoutMs = 10 * 60 * 1000

/** Fenced blocks: { line (1-based, of the opening fence), lang, tags, body }. */
function blocksOf(text) {
  const blocks = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)\s*(.*)$/.exec(lines[i])
    if (open === null) continue
    const fence = open[1]
    const body = []
    let j = i + 1
    while (j < lines.length && !(lines[j].startsWith(fence) && lines[j].trim() === fence)) body.push(lines[j++])
    if (j === lines.length) throw new Error(`${readmePath}:${i + 1}: code block is not closed`)
    blocks.push({ line: i + 1, lang: open[2], tags: open[3].split(/\s+/).filter(Boolean), body: body.join('\n') + '\n' })
    i = j
  }
  return blocks
}

function run(command, args, options = {}) {
  const started = Date.now()
  const r = spawnSync(command, args, {
    cwd: root,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 << 20,
    env: { ...process.env, TMPDIR: tmp },
    ...options,
  })
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`
  const error = r.error ? r.error.message : r.status !== 0 ? `exit status ${r.status}${r.signal ? ` (${r.signal})` : ''}` : undefined
  return { ok: error === undefined, error, output, seconds: (Date.now() - started) / 1000 }
}

/** The packages of .ci/run's `apt-get install` command, and whether it runs `npm ci` and `npm test`. */
function ciFacts() {
  const ci = readFileSync(join(root, '.ci', 'run'), 'utf8')
  const install = /apt-get install((?:[^\n\\]|\\\n)*)/.exec(ci)
  const packages = new Set(
    (install?.[1] ?? '')
      .replace(/\\\n/g, ' ')
      .split(/\s+/)
      .filter((w) => /^[a-z0-9][a-z0-9.+-]+$/.test(w) && !w.startsWith('-')),
  )
  const commands = ci.split('\n').filter((l) => !/^\s*#/.test(l))
  return {
    packages,
    npmCi: commands.some((l) => /\bnpm ci\b/.test(l)),
    npmTest: commands.some((l) => /^\s*npm test\b/.test(l)),
  }
}

function checkSetup(block) {
  const m = /^apt-get update && apt-get install -y ((?:[a-z0-9.+-]+ )+)&& npm ci && (.+)$/.exec(block.body.trim())
  if (m === null) return { ok: false, error: 'expected `apt-get update && apt-get install -y <packages> && npm ci && <command>`', output: block.body }
  const ci = ciFacts()
  const missing = m[1].trim().split(' ').filter((p) => !ci.packages.has(p))
  if (missing.length > 0) return { ok: false, error: `.ci/run does not install ${missing.join(', ')}`, output: '' }
  if (!ci.npmCi) return { ok: false, error: '.ci/run does not run `npm ci`', output: '' }
  const command = m[2].trim()
  if (command === 'npm test') {
    return ci.npmTest
      ? { ok: true, output: '', seconds: 0, note: 'packages and `npm test` as in .ci/run (which runs them before this check)' }
      : { ok: false, error: '.ci/run does not run `npm test`', output: '' }
  }
  const r = run('bash', ['-e', '-c', command])
  return { ...r, note: `packages as in .ci/run; ran \`${command}\`` }
}

function checkBlock(block) {
  const tags = new Set(block.tags)
  const shell = ['sh', 'bash', 'shell'].includes(block.lang)
  if (shell && tags.has('setup')) return checkSetup(block)
  if (shell && tags.has('runnable')) return run('bash', ['-e', '-c', block.body])
  if (['js', 'mjs', 'javascript'].includes(block.lang) && tags.has('runnable')) {
    const file = join(work, `block-${block.line}.mjs`)
    writeFileSync(file, block.body)
    return run(process.execPath, [file])
  }
  if (block.lang === 'text' && tags.has('usage')) {
    const r = run(process.execPath, [join(root, 'dist', 'lib', 'cli', 'main.js'), '--help'])
    if (!r.ok) return r
    return r.output.trimEnd() === block.body.trimEnd()
      ? { ...r, output: '' }
      : { ok: false, error: 'differs from `flexpipe --help` (lib/cli/main.ts); paste its output', output: r.output }
  }
  if (shell || ['js', 'mjs', 'javascript', 'ts', 'typescript'].includes(block.lang)) {
    return { ok: false, error: `unmarked ${block.lang} block: mark it \`runnable\` (or \`setup\`) so that it is run`, output: block.body }
  }
  return undefined // prose blocks (text, json, ...) are not checked
}

function indent(text, lines = 40) {
  const all = text.trimEnd().split('\n')
  const shown = all.length > lines ? ['...', ...all.slice(-lines)] : all
  return shown.map((l) => `    ${l}`).join('\n')
}

rmSync(work, { recursive: true, force: true })
mkdirSync(tmp, { recursive: true })
const blocks = blocksOf(readFileSync(readmePath, 'utf8'))
const where = relative(root, readmePath) || readmePath
let n = 0
let failed = 0
const started = Date.now()
console.log('TAP version 14')
for (const block of blocks) {
  const r = checkBlock(block)
  if (r === undefined) continue
  n++
  const label = `${where}:${block.line} ${block.lang} ${block.tags.join(' ')}`
  if (r.ok) {
    console.log(`ok ${n} - ${label} (${(r.seconds ?? 0).toFixed(1)} s${r.note ? `; ${r.note}` : ''})`)
    if (r.output.trim() !== '') console.log(indent(r.output, 12))
  } else {
    failed++
    console.log(`not ok ${n} - ${label}: ${r.error}`)
    if (r.output.trim() !== '') console.log(indent(r.output))
  }
}
rmSync(work, { recursive: true, force: true })
if (n === 0) {
  console.log(`not ok 1 - ${where}: no marked code blocks found`)
  failed = 1
  n = 1
}
console.log(`1..${n}`)
console.log(`# ${where}: ${n - failed}/${n} blocks pass (${((Date.now() - started) / 1000).toFixed(0)} s)`)
process.exit(failed === 0 ? 0 : 1)
