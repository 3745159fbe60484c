#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Runs the ONNX backend node tests for the operators flexpipe supports and prints pass/fail per
// test and per operator. Needs `npm run build:ts` and a built addon.
//   node scripts/onnx-backend.mjs [--op Conv]... [--failures] [--json out.json] [--markdown]
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

const { listBackendTests, claimedTests, runBackendTest } = await import('../dist/test/helpers/onnx-backend.js')

const { values } = parseArgs({
  options: {
    op: { type: 'string', multiple: true, default: [] },
    failures: { type: 'boolean', default: false },
    json: { type: 'string' },
    markdown: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log('usage: node scripts/onnx-backend.mjs [--op OpType]... [--failures] [--json out.json] [--markdown]')
  process.exit(0)
}
const all = listBackendTests()
let tests = claimedTests(all)
if (values.op.length > 0) tests = tests.filter((t) => t.ops.some((op) => values.op.includes(op)))
const results = []
for (const t of tests) {
  const r = await runBackendTest(t)
  results.push(r)
  if (!values.failures || !r.passed) console.log(`${r.passed ? 'pass' : 'FAIL'} ${t.name} [${t.ops.join(',')}]${r.reason ? ` — ${r.reason}` : ''}`)
}
const perOp = new Map()
for (const r of results) {
  for (const op of r.test.ops) {
    const e = perOp.get(op) ?? { passed: 0, failed: 0 }
    r.passed ? e.passed++ : e.failed++
    perOp.set(op, e)
  }
}
const passed = results.filter((r) => r.passed).length
console.log(`\n${passed}/${results.length} claimed backend tests pass (${all.length} tests in the data set)`)
if (values.markdown) {
  console.log('\n| operator | backend tests passed |\n|---|---|')
  for (const [op, e] of [...perOp].sort()) console.log(`| ${op} | ${e.passed}/${e.passed + e.failed} |`)
}
if (values.json) {
  writeFileSync(values.json, JSON.stringify({ total: results.length, passed, perOp: Object.fromEntries(perOp), failures: results.filter((r) => !r.passed).map((r) => ({ name: r.test.name, reason: r.reason })) }, null, 2))
}
