// SPDX-License-Identifier: Apache-2.0
// fitLine (lib/profile/fit-line.ts): the IO delay line of an elastic device profile is the least-squares
// line with both terms >= 0, on exact lines and on seeded random samples whose unconstrained fit has a
// negative intercept or slope (where clamping one term of the unconstrained fit is not the optimum).
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { fitLine } from '../../lib/profile/fit-line.js'

type Samples = Array<[number, number]>
const sse = (s: Samples, l: { msPerByte: number; msPerJob: number }): number => s.reduce((a, [b, ms]) => a + (l.msPerJob + b * l.msPerByte - ms) ** 2, 0)

t.test('an exact line with positive terms is recovered', async (t) => {
  const s: Samples = [1e5, 2e5, 4e5, 8e5].map((b) => [b, 0.2 + b * 3e-6])
  const l = fitLine(s)
  t.ok(Math.abs(l.msPerJob - 0.2) < 1e-9 && Math.abs(l.msPerByte - 3e-6) < 1e-15, `${l.msPerJob} ms + ${l.msPerByte} ms/B`)
})

t.test('no admissible line near the fit fits better, on random samples of every sign of trend', async (t) => {
  for (let seed = 1; seed <= 200; seed++) {
    const rand = seededRandom(seed)
    const n = 2 + Math.floor(rand() * 6)
    const perByte = (rand() - 0.3) * 1e-5 // some negative slopes
    const perJob = (rand() - 0.5) * 2 // and negative intercepts
    const s: Samples = Array.from({ length: n }, () => {
      const b = Math.floor(rand() * 1e6)
      return [b, Math.max(0, perJob + b * perByte + (rand() - 0.5) * 0.5)]
    })
    const l = fitLine(s)
    t.ok(l.msPerByte >= 0 && l.msPerJob >= 0, `seed ${seed}: both terms >= 0`)
    const best = sse(s, l)
    const steps = [0.5, 0.01, 1e-4]
    const worse: string[] = []
    for (const d of steps) {
      for (const [db, dj] of [[1, 0], [-1, 0], [0, 1], [0, -1], [1, -1], [-1, 1]] as const) {
        const near = { msPerByte: Math.max(0, l.msPerByte + db * d * (l.msPerByte || 1e-6)), msPerJob: Math.max(0, l.msPerJob + dj * d * (l.msPerJob || 1e-3)) }
        if (sse(s, near) < best * (1 - 1e-9) - 1e-12) worse.push(`${JSON.stringify(near)}: ${sse(s, near)} < ${best}`)
      }
    }
    t.same(worse, [], `seed ${seed}: ${n} samples, fit ${l.msPerJob.toFixed(4)} ms + ${l.msPerByte.toExponential(3)} ms/B`)
  }
})

t.test('no samples give the zero line', async (t) => {
  t.same(fitLine([]), { msPerByte: 0, msPerJob: 0 })
})
