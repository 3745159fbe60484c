// SPDX-License-Identifier: Apache-2.0
// The online latency factor of elastic engines: recent median x spread, and when it triggers a re-plan.
import t from 'tap'
import { latencyFactor, medianStandardError, onlineCalibration, openFactor, replanFactor } from '../../lib/plan/elastic/online-calibration.js'

/** Deterministic pseudo-random ratios around `scale` with a spread of about +-`jitter`. */
function ratios(n: number, scale: number, jitter: number, seed = 1): number[] {
  let x = seed
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648
    out.push(scale * (1 + jitter * (x / 2147483648 - 0.5)))
  }
  return out
}

t.test('no factor before minSamples ratios; never below 1', async (t) => {
  t.equal(latencyFactor(ratios(onlineCalibration.minSamples - 1, 2, 0.1)), undefined)
  t.equal(latencyFactor(ratios(onlineCalibration.minSamples, 0.5, 0.02)), 1, 'a pessimistic model (ratio 0.5) does not make the planner aim past 1.05 T: part of its error is fixed cost, which a larger plan does not shrink')
})

t.test('steady ratios: the factor covers their p95 and wastes little', async (t) => {
  for (const [scale, jitter] of [[1.3, 0.2], [0.9, 0.4], [2, 0.05]] as const) {
    const rs = ratios(48, scale, jitter, 5)
    const f = latencyFactor(rs)!
    const sorted = [...rs].sort((a, b) => a - b)
    const p95 = sorted[Math.ceil(0.95 * sorted.length) - 1]!
    t.ok(f >= Math.max(1, p95) * 0.99 && f <= Math.max(1, p95) * 1.1, `scale ${scale} +-${jitter / 2}: factor ${f.toFixed(3)} vs the window's p95 ${p95.toFixed(3)}`)
  }
})

t.test('one spike does not move the factor much; a drift of the machine does', async (t) => {
  const base = ratios(48, 1.2, 0.1)
  const f0 = latencyFactor(base)!
  const spiked = [...base.slice(1), 6]
  t.ok(latencyFactor(spiked)! <= f0 * onlineCalibration.up, `one 6x outlier: ${latencyFactor(spiked)!.toFixed(3)} vs ${f0.toFixed(3)} (inside the hysteresis band, no re-plan)`)
  const drifted = [...base.slice(16), ...ratios(16, 2.0, 0.1, 7)]
  const fd = latencyFactor(drifted)!
  t.ok(fd > 2 && fd < 2 * 1.05 * 1.2, `16 inferences at 2.0 (+-5%) after 1.2: factor ${fd.toFixed(3)} (was ${f0.toFixed(3)}); the drift is not counted as jitter`)
  const { minIntervalUp: up, minIntervalDown: down } = onlineCalibration
  t.equal(replanFactor(drifted, f0, up), fd * onlineCalibration.margin, 'a slower machine re-plans (shrinks the plan) soon, with a margin')
  t.equal(replanFactor(spiked, f0, down), undefined, 'a spike does not')
  t.equal(replanFactor(drifted, f0, up - 1), undefined, 'not sooner than minIntervalUp inferences after a re-plan')
  const faster = [...base.slice(16), ...ratios(16, 0.8, 0.05, 3)]
  t.ok(replanFactor(faster, f0, down)! < f0, 'a faster machine re-plans for a larger sub-model')
  t.equal(replanFactor(faster, f0, down - 1), undefined, 'but only minIntervalDown inferences after a re-plan')
})

t.test('openFactor re-plans on a drift, not on the noise of a few runs', async (t) => {
  // Eight ratios measured at open on this VM (worst-case input, cold IO): median 1.08, spread 0.87-1.40.
  const noisy = [1.15, 1.4, 1.2, 0.9, 0.87, 1.17, 0.99, 0.99]
  t.equal(openFactor(noisy, 1.1, 1.1), undefined, 'within its own standard error of the model: the plan stays')
  t.ok(medianStandardError(noisy, 1.07) > 0.04, 'the standard error is not negligible')
  const drifted = noisy.map((r) => r * 1.5)
  const f = openFactor(drifted, 1.1, 1.1)
  t.ok(f !== undefined && f > 1.1 * 1.4, `the same spread 1.5x slower: re-plan (factor ${f?.toFixed(3)})`)
  const faster = noisy.map((r) => r * 0.6)
  t.ok((openFactor(faster, 1.5, 1) ?? Infinity) < 1.5 * 0.8, 'a device much faster than profiled: grow')
  t.equal(openFactor([1.3, 1.3], 1, 1), 1.3 * onlineCalibration.margin, 'two runs count as exact (no spread measured)')
  t.equal(openFactor([1.3, 1.31, 1.29, 1.3], 1, 1), 1.3 * onlineCalibration.margin, 'a tight spread: a 30% slower device re-plans')
})
