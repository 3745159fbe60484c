// SPDX-License-Identifier: Apache-2.0
// ONNX backend node tests (Debian libonnx-testdata) for every operator flexpipe claims: >= 95% pass,
// and every failure is one listed, with its reason, in onnx-backend-expected-failures.json.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { backendTestRoot, claimedTests, listBackendTests, runBackendTest } from '../helpers/onnx-backend.js'
import { repoRoot } from '../helpers/data.js'

const expected = JSON.parse(readFileSync(join(repoRoot, 'test', 'models', 'onnx-backend-expected-failures.json'), 'utf8')) as Record<string, string>

t.test('ONNX backend node tests of the supported operators', async (t) => {
  t.ok(existsSync(backendTestRoot), `backend test data at ${backendTestRoot} (apt-get install libonnx-testdata)`)
  const tests = claimedTests(listBackendTests())
  t.ok(tests.length > 500, `found ${tests.length} claimed tests`)
  let passed = 0
  for (const test of tests) {
    const r = await runBackendTest(test)
    if (r.passed) passed++
    const reason = expected[test.name]
    if (reason === undefined) t.ok(r.passed, `${test.name}${r.reason ? `: ${r.reason}` : ''}`)
    else t.notOk(r.passed, `${test.name} fails as listed (${reason})`)
  }
  const ratio = passed / tests.length
  t.ok(ratio >= 0.95, `${passed}/${tests.length} = ${(ratio * 100).toFixed(1)}% pass`)
})
