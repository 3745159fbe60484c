// SPDX-License-Identifier: Apache-2.0
// stagingWindow: the smallest ring of staged layers that leaves the planned pipeline's makespan as it
// is, on hand cases and on random profiles and plans.
import t from 'tap'
import { pipelineTimeline, planElastic, stagingWindow, windowedMakespan } from '../../lib/plan/elastic/index.js'
import type { ElasticProfile } from '../../lib/plan/elastic/index.js'
import { prng } from '../helpers/plan-problems.js'

t.test('hand cases', async (t) => {
  // IO faster than compute: one slot ahead is enough... unless IO must run ahead to hide a slow layer.
  t.equal(windowedMakespan([1, 1, 1, 1], 2, 0, 4), 1 + 4 * 2, 'unconstrained: first IO, then compute-bound')
  t.equal(windowedMakespan([1, 1, 1, 1], 2, 0, 1), 1 + 4 * 2 + 3 * 1, 'one slot: every IO waits for the previous compute')
  t.equal(windowedMakespan([1, 1, 1, 1], 2, 0, 2), 1 + 4 * 2, 'two slots hide IO behind compute')
  // A burst of IO at the start (slack used up front) needs a wider window.
  t.equal(windowedMakespan([0, 0, 5, 5], 1, 10, 4), 14, 'IO of later layers overlaps the fixed part')
  t.equal(windowedMakespan([0, 0, 5, 5], 1, 10, 1), 24, 'one slot makes each IO wait for the previous compute')
})

t.test('random profiles: the window keeps the makespan and is minimal', async (t) => {
  const r = prng(11)
  let checked = 0
  for (let i = 0; i < 200; i++) {
    const L = 1 + Math.floor(r() * 8)
    const M = 1 + Math.floor(r() * 8)
    const per = 0.2 + r() * 3
    const profile: ElasticProfile = {
      layers: L,
      shardsPerLayer: M,
      bitwidths: [2, 4, 6, 32],
      shardBytes: (bits) => 4096 * Math.ceil((bits * 1000) / 4096) * 8,
      readMsPerByte: r() * 2e-5,
      readMsPerJob: r() * 0.3,
      layerComputeMs: [0, ...Array.from({ length: M }, (_, m) => per * (m + 1))],
      fixedMs: r() * 2,
    }
    const targetMs = profile.fixedMs + L * per * M * (0.4 + r() * 2)
    let plan
    try {
      plan = planElastic(profile, [], { targetMs, preloadBytes: Math.floor(r() * 3) * 40000 })
    } catch {
      continue
    }
    const w = stagingWindow(profile, plan)
    const free = pipelineTimeline(profile, plan).totalMs
    const c = profile.layerComputeMs[plan.width]!
    const jobs = pipelineTimeline(profile, plan).ioEndMs.map((e, k, all) => e - (k > 0 ? all[k - 1]! : 0))
    t.ok(w >= 1 && w <= plan.depth)
    t.ok(windowedMakespan(jobs, c, profile.fixedMs, w) <= free + 1e-9 * Math.max(1, free), 'the window keeps the makespan')
    if (w > 1) t.ok(windowedMakespan(jobs, c, profile.fixedMs, w - 1) > free + 1e-9 * Math.max(1, free), 'one slot fewer would delay it')
    checked++
  }
  t.ok(checked > 100, `${checked} feasible random plans checked`)
})
