// SPDX-License-Identifier: Apache-2.0
// The README's shape, without running its blocks (scripts/check-readme.mjs runs them, in CI after
// npm test): short enough for a newcomer, every shell or JavaScript block marked to be run, the CLI
// usage as the CLI prints it, and every relative link in the README and docs/ pointing at a file.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

interface Fence {
  readonly line: number
  readonly lang: string
  readonly tags: readonly string[]
  readonly body: string
}

function fences(text: string): Fence[] {
  const out: Fence[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^(`{3,})(\S*)\s*(.*)$/.exec(lines[i]!)
    if (m === null) continue
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && lines[j]!.trim() !== m[1]) body.push(lines[j++]!)
    out.push({ line: i + 1, lang: m[2]!, tags: m[3]!.split(/\s+/).filter(Boolean), body: body.join('\n') })
    i = j
  }
  return out
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  )
}

t.test('the README is at most 350 lines', async (t) => {
  t.ok(readme.split('\n').length - 1 <= 350, `${readme.split('\n').length - 1} lines`)
})

t.test('every shell and JavaScript block of the README is marked runnable or setup', async (t) => {
  const code = fences(readme).filter((f) => ['sh', 'bash', 'shell', 'js', 'mjs', 'javascript', 'ts'].includes(f.lang))
  t.ok(code.length >= 5, `${code.length} code blocks`)
  for (const f of code) t.ok(f.tags.includes('runnable') || f.tags.includes('setup'), `README.md:${f.line} ${f.lang} ${f.tags.join(' ')}`)
  t.equal(code.filter((f) => f.tags.includes('setup')).length, 2, 'two set-up commands')
})

t.test("the README's CLI usage is what `flexpipe --help` prints", async (t) => {
  const usage = fences(readme).find((f) => f.lang === 'text' && f.tags.includes('usage'))
  t.ok(usage, 'a ```text usage block')
  const printed = execFileSync(process.execPath, [join(root, 'dist', 'lib', 'cli', 'main.js'), '--help'], { encoding: 'utf8' })
  t.equal(usage?.body.trimEnd(), printed.trimEnd())
})

t.test('relative links in the README, docs/ and bench/results/README.md point at files', async (t) => {
  const files = [join(root, 'README.md'), join(root, 'bench', 'results', 'README.md'), ...markdownFiles(join(root, 'docs'))]
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!.split('#')[0]!
      if (target === '' || /^[a-z]+:/.test(target)) continue
      t.ok(existsSync(join(dirname(file), target)), `${file.slice(root.length + 1)} -> ${m[1]}`)
    }
  }
})
