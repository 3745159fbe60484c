// SPDX-License-Identifier: Apache-2.0
// memoryBudget: 'auto' in a BudgetedEngine, on a fake cgroup v2 tree (BudgetedEngine.open's memoryRoot):
// the engine follows memory.max before the next inference, keeps its plan for moves inside the band,
// runs its minimum plan and says so under an infeasible limit, grows back, shrinks under pressure,
// follows while idle, ignores malformed files, and hands over to and from setMemoryBudget. The fake
// memory.current is the rest of the cgroup (`base`) plus what the engine counts as its own, as a real
// cgroup's usage would be, so every budget is exact. Also: the option's errors and `flexpipe run
// --budget auto`. The same on a real cgroup: auto-budget-cgroup.test.ts.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ArgumentError, OptionError } from '../../lib/errors.js'
import { BudgetedEngine, open, type BudgetStats } from '../../lib/index.js'
import { autoBudgetConstants, bandBytes, headroomBytes, type AutoBudgetConstants } from '../../lib/plan/budget/auto-budget.js'
import type { AutoBudgetChange } from '../../lib/runtime/budget-follower.js'
import { checkOptionNames } from '../../lib/validate.js'
import { mlpPackage, type MlpPackage } from '../helpers/auto-budget.js'
import { fakeCgroupV2 } from '../helpers/fake-cgroupfs.js'
import { checkOutputs, threads } from '../helpers/budget.js'
import { repoRoot } from '../helpers/data.js'

const MiB = 2 ** 20
const GiB = 2 ** 30
/** The rest of the fake cgroup: far above this process's RSS, so the fake usage is what counts. */
const base = 8 * GiB

/** A fake cgroup v2 machine (1 TiB of RAM) with the process in /app; removed when `t` ends. */
function fakeMachine(t: Test) {
  const { root, put } = fakeCgroupV2(t)
  put('proc/meminfo', `MemTotal: ${2 ** 30} kB\nMemAvailable: ${2 ** 29} kB\n`)
  put('sys/fs/cgroup/app/memory.pressure', 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n')
  return {
    root,
    limit: (bytes: number | string): void => put('sys/fs/cgroup/app/memory.max', `${bytes}\n`),
    pressure: (avg10: number): void => put('sys/fs/cgroup/app/memory.pressure', `some avg10=${avg10.toFixed(2)} avg60=0.00 avg300=0.00 total=1\n`),
    /** The cgroup's usage as the kernel would report it with the engine holding what its stats say. */
    usage: (s: BudgetStats): void => put('sys/fs/cgroup/app/memory.current', `${base + s.arenaBytes + s.reservedBytes}\n`),
  }
}

/** The limit whose derived budget is `budget` when the rest of the cgroup holds `base`. */
function limitFor(budget: number): number {
  let limit = base + budget + headroomBytes(base + budget)
  while (limit - headroomBytes(limit) < base + budget) limit++
  return limit
}

async function openAuto(t: Test, pkg: MlpPackage, m: ReturnType<typeof fakeMachine>, constants: Partial<AutoBudgetConstants> = {}) {
  const changes: AutoBudgetChange[] = []
  const engine = await BudgetedEngine.open(pkg.path, { threads, memoryBudget: 'auto', onAutoBudget: (c) => changes.push(c) }, { memoryRoot: m.root, autoConstants: { ...autoBudgetConstants, ...constants } })
  t.teardown(() => engine.close())
  /** One inference with the fake usage brought up to date first, checked against the unbudgeted outputs. */
  const infer = async (what: string): Promise<BudgetStats> => {
    m.usage(engine.stats())
    checkOutputs(t, await engine.infer(pkg.feeds), pkg.want, false, what)
    await engine.settled()
    return engine.stats()
  }
  return { engine, changes, infer }
}

t.test('memoryBudget auto follows memory.max before the next inference: shrink, keep inside the band, infeasible, grow back, pressure', async (t) => {
  const pkg = await mlpPackage()
  const m = fakeMachine(t)
  m.limit(64 * GiB)
  const { engine, changes, infer } = await openAuto(t, pkg, m, { growIntervalMs: 0, pressureStep: 0.5 })
  const full = await infer('at open')
  t.equal(full.auto?.source, 'cgroup2', 'the limit comes from cgroup v2')
  t.equal(full.auto?.limitFile, join(m.root, 'sys/fs/cgroup/app/memory.max'))
  t.equal(full.loadBytesPerInference, 0, 'a limit far above the model: every weight resident')
  t.equal(full.memoryBudget, full.auto?.derivedBudget, `the budget is the full model's (${full.memoryBudget})`)
  t.ok(full.memoryBudget >= pkg.unlimitedBudget, `at least the unlimited budget prepare reported (${pkg.unlimitedBudget})`)

  const target = full.memoryBudget - 12 * MiB
  m.limit(limitFor(target))
  const shrunk = await infer('after memory.max fell')
  t.equal(shrunk.memoryBudget, target, `the next inference ran at the derived budget (${target})`)
  t.equal(shrunk.auto?.otherBytes, base, 'the rest of the cgroup is what the engine does not hold')
  t.ok(shrunk.memoryBudget + base + (shrunk.auto?.headroomBytes ?? 0) <= shrunk.auto!.limitBytes!, 'budget + other + headroom <= limit')
  t.ok(shrunk.loadBytesPerInference > 0 && shrunk.pinnedBytes < full.pinnedBytes, `the plan changed: ${shrunk.loadBytesPerInference} bytes read per inference, ${shrunk.pinnedBytes} pinned (was ${full.pinnedBytes})`)
  t.match(changes, [{ reason: 'limit', from: full.memoryBudget, to: target, status: 'following' }], 'onAutoBudget heard of it')
  t.match(shrunk.auto?.lastChange, { reason: 'limit', to: target })

  m.limit(limitFor(target - bandBytes(target) + MiB))
  const kept = await infer('after a move inside the band')
  t.equal(kept.memoryBudget, target, 'no re-plan for a move inside the band')
  t.ok(kept.auto!.derivedBudget < target, `though the derived budget moved (${kept.auto!.derivedBudget})`)

  m.limit(base + MiB)
  const low = await infer('under an infeasible limit')
  t.equal(low.memoryBudget, engine.minimumBudget, 'a limit below the minimum: the minimum plan')
  t.equal(low.auto?.status, 'infeasible', 'reported as infeasible, not thrown')
  t.match(changes.at(-1), { reason: 'limit', to: engine.minimumBudget, status: 'infeasible' })

  m.limit('max')
  const back = await infer("after memory.max went back to 'max'")
  t.equal(back.auto?.source, 'meminfo', 'no limit: MemAvailable')
  t.equal(back.memoryBudget, full.memoryBudget, 'grown back to the full model')
  t.equal(back.loadBytesPerInference, 0)
  t.equal(back.auto?.status, 'following')

  m.pressure(50)
  const pressed = await infer('under memory pressure')
  t.equal(pressed.auto?.pressure, 50)
  t.equal(pressed.auto?.pressureSteps, 1)
  t.equal(pressed.memoryBudget, Math.floor(full.memoryBudget * 0.5), 'one pressure step of 50 %')
  t.match(changes.at(-1), { reason: 'pressure' })
})

t.test('an idle engine follows memory.max too (its timer), and a malformed memory.max is ignored with the reason', async (t) => {
  const pkg = await mlpPackage()
  const m = fakeMachine(t)
  m.limit(64 * GiB)
  const { engine, infer } = await openAuto(t, pkg, m)
  const full = await infer('at open')
  const target = full.memoryBudget - 12 * MiB
  m.limit(limitFor(target))
  // No inference: the engine's once-a-second check re-plans on its own.
  while (engine.memoryBudget === full.memoryBudget) await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(engine.memoryBudget, target, 'followed without an inference')

  m.limit('plenty')
  const s = await infer('with a malformed memory.max')
  t.ok(s.auto?.ignored.some((r) => /memory\.max: expected a byte count or 'max', got 'plenty'/.test(r)), `ignored: ${s.auto?.ignored.join('; ')}`)
  t.equal(s.auto?.source, 'meminfo', 'no limit left: MemAvailable')
})

t.test("setMemoryBudget(bytes) stops following, setMemoryBudget('auto') starts again", async (t) => {
  const pkg = await mlpPackage()
  const m = fakeMachine(t)
  m.limit(64 * GiB)
  const { engine, infer } = await openAuto(t, pkg, m)
  const full = await infer('at open')
  await engine.setMemoryBudget(full.memoryBudget - 8 * MiB)
  t.equal(engine.stats().auto, undefined, 'a number: no longer following')
  m.limit(limitFor(full.memoryBudget - 12 * MiB))
  t.equal((await infer('with a fixed budget')).memoryBudget, full.memoryBudget - 8 * MiB, 'memory.max is no longer read')
  await engine.setMemoryBudget('auto')
  t.equal(engine.memoryBudget, full.memoryBudget - 12 * MiB, "'auto': the derived budget at once")
  t.equal(engine.stats().auto?.source, 'cgroup2')
  await t.rejects(engine.setMemoryBudget('Auto' as never), { constructor: ArgumentError, message: /memoryBudget: expected a positive integer number of bytes or 'auto', got Auto/ })
})

t.test("'auto' is for memory-budget packages: bad values, ONNX models and elastic packages are told what to do", async (t) => {
  const pkg = await mlpPackage()
  await t.rejects(BudgetedEngine.open(pkg.path, { memoryBudget: 'half' as never }), { constructor: ArgumentError, message: /memoryBudget: expected a positive integer number of bytes or 'auto', got half/ })
  await t.rejects(BudgetedEngine.open(pkg.path, { memoryBudget: 'auto', onAutoBudget: 3 as never }), { constructor: ArgumentError, message: /onAutoBudget: expected a function, got number/ })
  await t.rejects(open(pkg.onnx, { memoryBudget: 'auto' }), { constructor: OptionError, options: ['memoryBudget'], message: /only packages run within a memory budget; make one with `flexpipe prepare/ })
  t.throws(() => checkOptionNames({ memoryBudget: 'auto', onAutoBudget: () => undefined }, 'elastic', 'bert.fpk'), { constructor: OptionError, options: ['memoryBudget', 'onAutoBudget'], message: /bert\.fpk is an elastic package; .* not within a memory budget/ })
})

t.test('CLI: flexpipe run --budget auto runs a package at the budget the machine leaves it', async (t) => {
  const pkg = await mlpPackage()
  const main = join(repoRoot, 'dist', 'lib', 'cli', 'main.js')
  const out = execFileSync(process.execPath, [main, 'run', pkg.path, '--budget', 'auto', '--random', '--threads', String(threads)], { encoding: 'utf8' })
  t.match(out, /^y: float32 \[1, 512\]/m, 'run prints the output')
  t.match(out, /budget [\d.]+ MB \(auto: (cgroup1|cgroup2|meminfo|none)[^)]*\)/, 'and the budget it chose, with where the limit came from')
})
