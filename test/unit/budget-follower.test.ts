// SPDX-License-Identifier: Apache-2.0
// The follower behind memoryBudget: 'auto' (lib/runtime/budget-follower.ts) without an engine: a fake
// cgroup v2 tree, a fake clock and a re-plan callback. A re-plan that fails keeps the budget and says
// why; the next one that succeeds clears it and is reported; a limit that becomes infeasible while the
// engine is already at its minimum is reported without a re-plan.
import t from 'tap'
import { headroomBytes, type EngineFigures } from '../../lib/plan/budget/auto-budget.js'
import { BudgetFollower, type AutoBudgetChange } from '../../lib/runtime/budget-follower.js'
import { MemoryLimitReader } from '../../lib/runtime/memory-limit.js'
import { fakeCgroupV2 } from '../helpers/fake-cgroupfs.js'

const MiB = 2 ** 20

t.test('a failed re-plan keeps the budget and its reason; the next one clears it; infeasible is reported at the minimum', async (t) => {
  const { root, put } = fakeCgroupV2(t)
  put('sys/fs/cgroup/app/memory.max', `${1024 * MiB}\n`)
  put('sys/fs/cgroup/app/memory.current', `${100 * MiB}\n`)

  let now = 0
  const changes: AutoBudgetChange[] = []
  const figures: EngineFigures = { rssBytes: 100 * MiB, ownBytes: 0, minimumBudget: 20 * MiB, fullBudget: 400 * MiB }
  const f = new BudgetFollower(figures, (c) => changes.push(c), new MemoryLimitReader(root), undefined, () => now)
  t.equal(f.budget, 400 * MiB, 'the full model fits under 1 GiB')

  put('sys/fs/cgroup/app/memory.max', `${300 * MiB}\n`)
  const wanted = 300 * MiB - 100 * MiB - headroomBytes(300 * MiB)
  now = 10
  const asked: number[] = []
  await f.follow(figures, async (bytes) => {
    asked.push(bytes)
    throw new Error('the package is gone')
  })
  t.same(asked, [wanted], 'asked to re-plan for limit - other - headroom')
  t.equal(f.budget, 400 * MiB, 'the re-plan failed: the budget in force stays')
  t.equal(f.stats().lastError, 'the package is gone')
  t.equal(f.stats().derivedBudget, wanted)
  await Promise.resolve()
  t.same(changes, [], 'no change to report')

  now = 20
  await f.follow(figures, async (bytes) => void asked.push(bytes))
  t.equal(f.budget, wanted, 'the next reading re-plans again, and it holds')
  t.equal(f.stats().lastError, undefined)
  await Promise.resolve()
  t.match(changes, [{ reason: 'limit', from: 400 * MiB, to: wanted, status: 'following' }])

  put('sys/fs/cgroup/app/memory.max', `${100 * MiB}\n`)
  now = 30
  await f.follow(figures, async (bytes) => void asked.push(bytes))
  t.equal(f.budget, 20 * MiB, 'below the minimum: the minimum')
  put('sys/fs/cgroup/app/memory.max', `${90 * MiB}\n`)
  now = 40
  await f.follow(figures, async () => t.fail('no re-plan at the minimum'))
  await Promise.resolve()
  t.equal(changes.length, 2, 'the drop to the minimum was one change; a lower limit adds none')
  t.match(changes.at(-1), { to: 20 * MiB, status: 'infeasible' })

  put('sys/fs/cgroup/app/memory.max', `${140 * MiB}\n`)
  now = 50
  await f.follow(figures, async () => t.fail('no re-plan: still at the minimum, and growing waits growIntervalMs'))
  await Promise.resolve()
  t.match(changes.at(-1), { from: 20 * MiB, to: 20 * MiB, status: 'following' }, 'feasible again: reported without a re-plan')
  t.equal(f.stats().status, 'following')
})
