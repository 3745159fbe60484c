// SPDX-License-Identifier: Apache-2.0
// Adapting to a budget change (FlexNN's adaptation): time of setMemoryBudget() on a prepared package,
// split into planning (layer slicing when needed + the preload-aware memory plan) and applying it
// (re-sizing the arena, re-reading resident constants and pinned weights), and whether slicing ran again.
//
//   npm run bench:replan                                  # ResNet-152, the package bench:memory prepared
//   npm run bench:replan -- --model vgg19 --threads 2
//
// Walks a fixed budget sequence down and up (each change followed by one inference, as a server would),
// five rounds; prints a table of medians per change and writes bench/results/replan.json.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openPackage } from '../../lib/index.js'
import { machine, resultsDir, versions } from '../models/cases.js'
import { MB, memoryCase, packageDir } from './memory-cases.js'

const { values } = parseArgs({ options: { model: { type: 'string', default: 'resnet152' }, threads: { type: 'string', default: '2' }, rounds: { type: 'string', default: '5' } } })
const c = memoryCase(values.model!)
const threads = Number(values.threads)
const rounds = Number(values.rounds)
const pkg = existsSync(packageDir) ? readdirSync(packageDir).find((f) => f.startsWith(`${c.name}-curve-`) && f.endsWith('.fpk')) : undefined
if (pkg === undefined) throw new Error(`no curve package for ${c.name} in ${packageDir}: run npm run bench:memory -- --models ${c.name} first`)
const path = join(packageDir, pkg)

const median = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const engine = await openPackage(path, { threads, memoryBudget: 200 * MB })
const min = engine.minimumBudget
// Down within the current slicing, to the minimum (where layers must be sliced), back up.
const budgets = [150 * MB, 100 * MB, min, 100 * MB, 200 * MB]
const feeds = c.feeds()
await engine.infer(feeds)
const rows = new Map<string, { plan: number[]; apply: number[]; resliced: boolean[] }>()
let from = 200 * MB
for (let r = 0; r < rounds; r++) {
  for (const b of budgets) {
    const change = await engine.setMemoryBudget(b)
    await engine.infer(feeds)
    const key = `${(from / MB).toFixed(0)} -> ${(b / MB).toFixed(0)} MB`
    const row = rows.get(key) ?? { plan: [], apply: [], resliced: [] }
    row.plan.push(change.planMs)
    row.apply.push(change.applyMs)
    row.resliced.push(change.resliced)
    rows.set(key, row)
    from = b
  }
}
await engine.close()
const table = [...rows].map(([change, r]) => ({
  change,
  resliced: r.resliced.every((x) => x) ? 'yes' : r.resliced.some((x) => x) ? 'sometimes' : 'no',
  planMs: Number(median(r.plan).toFixed(2)),
  applyMs: Number(median(r.apply).toFixed(1)),
  runs: r.plan.length,
}))
console.log(`${c.describe}, package ${pkg}, threads ${threads}, minimum budget ${(min / MB).toFixed(1)} MB; medians of ${rounds} rounds`)
console.log('| change | re-sliced | plan ms | apply ms |\n|---|---|---:|---:|')
for (const t of table) console.log(`| ${t.change} | ${t.resliced} | ${t.planMs} | ${t.applyMs} |`)
mkdirSync(resultsDir, { recursive: true })
writeFileSync(join(resultsDir, 'replan.json'), JSON.stringify({ model: c.name, package: pkg, threads, machine: machine(), versions: versions(), minimumBudget: min, rows: table }, null, 2) + '\n')
