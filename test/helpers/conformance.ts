// SPDX-License-Identifier: Apache-2.0
// One conformance case: run a model in flexpipe and onnxruntime-node on the same feeds and check
// every output against max |ours - ort| <= 1e-4 * max|ort| + 1e-5.
import type { Test } from 'tap'
import { open, type Tensor } from '../../lib/index.js'
import { compareTensors, maxAbs } from './compare.js'
import { runOrt } from './ort.js'

export interface ConformanceCase {
  readonly name: string
  readonly model: string
  readonly feeds: () => Promise<Record<string, Tensor>>
}

export async function checkConformance(t: Test, c: ConformanceCase, threads = 2): Promise<void> {
  const feeds = await c.feeds()
  const want = await runOrt(c.model, feeds, threads)
  const engine = await open(c.model, { threads })
  try {
    const got = await engine.infer(feeds)
    t.same(Object.keys(got).sort(), Object.keys(want).sort(), 'same output names')
    for (const [name, w] of Object.entries(want)) {
      const g = got[name]!
      t.equal(g.dtype, w.dtype, `${name} dtype`)
      const atol = 1e-4 * maxAbs(w) + 1e-5
      const r = compareTensors(g, w, atol, 0)
      t.ok(r.ok, `${name} [${w.dims.join(', ')}]: max |diff| ${r.maxAbsDiff.toExponential(2)} <= ${atol.toExponential(2)}${r.reason ? ` (${r.reason})` : ''}`)
    }
  } finally {
    await engine.close()
  }
}
