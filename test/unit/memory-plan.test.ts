// SPDX-License-Identifier: Apache-2.0
// planMemory: no two buffers that are live at the same step overlap, and the size bounds them all.
import t from 'tap'
import { planMemory, type BufferRequest } from '../../lib/plan/memory/memory-plan.js'
import { seededRandom } from '../../lib/cli/inputs.js'

function randomRequests(seed: number, n: number): BufferRequest[] {
  const rand = seededRandom(seed)
  return Array.from({ length: n }, () => {
    const first = Math.floor(rand() * 40) - 1
    return { bytes: Math.floor(rand() * 10000), first, last: first + Math.floor(rand() * 10) }
  })
}

t.test('planMemory never overlaps buffers that are live at the same time', async (t) => {
  for (let seed = 1; seed <= 200; seed++) {
    const reqs = randomRequests(seed, 1 + (seed % 60))
    const plan = planMemory(reqs)
    for (let i = 0; i < reqs.length; i++) {
      const a = reqs[i]!
      const oa = plan.offsets[i]!
      t.ok(oa % 64 === 0 && oa + a.bytes <= plan.size, `seed ${seed}: buffer ${i} is aligned and inside the region`)
      for (let j = i + 1; j < reqs.length; j++) {
        const b = reqs[j]!
        const ob = plan.offsets[j]!
        const liveTogether = a.first <= b.last && b.first <= a.last
        const disjoint = oa + a.bytes <= ob || ob + b.bytes <= oa || a.bytes === 0 || b.bytes === 0
        if (liveTogether && !disjoint) t.fail(`seed ${seed}: buffers ${i} and ${j} overlap while both live`)
      }
    }
  }
})

t.test('planMemory reuses memory of buffers whose lifetimes do not intersect', async (t) => {
  const plan = planMemory([
    { bytes: 1000, first: 0, last: 1 },
    { bytes: 1000, first: 2, last: 3 },
    { bytes: 1000, first: 4, last: 5 },
  ])
  t.equal(plan.size, 1024)
  t.same(plan.offsets, [0, 0, 0])
})

t.test('planMemory is deterministic', async (t) => {
  const reqs = randomRequests(7, 50)
  t.same(planMemory(reqs), planMemory(reqs))
})
