// SPDX-License-Identifier: Apache-2.0
// runPipeline (lib/runtime/budget/pipeline.ts) with fake load/compute IO on seeded random schedules:
// the planned dependencies hold, both queues keep their order, failures stop all further IO.
import t, { type Test } from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { batchBytes, loadsNeeded, runPipeline, type PipelineIo, type PipelineLoad, type PipelineSchedule } from '../../lib/runtime/budget/pipeline.js'

const seed = 7331
type Rand = () => number
const int = (rand: Rand, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))

/** Loads in queue order with non-decreasing steps and after < step (what the memory plan produces). */
function randomSchedule(rand: Rand): PipelineSchedule {
  const ops = int(rand, 1, 14)
  const n = int(rand, 0, 12)
  const steps = Array.from({ length: n }, () => int(rand, 0, ops - 1)).sort((a, b) => a - b)
  const loads: PipelineLoad[] = steps.map((step) => ({ step, after: rand() < 0.3 ? -1 : int(rand, -1, step - 1) }))
  return { ops, loads }
}

type Event =
  | { kind: 'load-start' | 'load-end'; index: number; batch: number; seq: number }
  | { kind: 'compute-start' | 'compute-end'; begin: number; end: number; seq: number }

interface Fake {
  readonly io: PipelineIo
  readonly events: Event[]
  /** Calls still running. */
  pending(): number
  /** seq of the moment the injected failure was delivered, or undefined. */
  failedAt(): number | undefined
}

/** Async after a random small delay, from a timer or setImmediate (never synchronously). */
const delay = (rand: Rand): Promise<void> =>
  new Promise((resolve) => (rand() < 0.5 ? setImmediate(resolve) : setTimeout(resolve, int(rand, 0, 1))))

function fakeIo(rand: Rand, fail?: { kind: 'load' | 'compute'; at: number; error: Error }): Fake {
  const events: Event[] = []
  let seq = 0
  let pending = 0
  let failedAt: number | undefined
  const call = async (start: () => void, end: () => void, fails: boolean): Promise<void> => {
    start()
    pending++
    await delay(rand)
    pending--
    if (fails) {
      failedAt = seq++
      throw fail!.error
    }
    end()
  }
  let computeCalls = 0
  let loadBatches = 0
  const io: PipelineIo = {
    load: (begin, end) => {
      const batch = loadBatches++
      const indices = Array.from({ length: end - begin }, (_, i) => begin + i)
      return call(
        () => indices.forEach((index) => events.push({ kind: 'load-start', index, batch, seq: seq++ })),
        () => indices.forEach((index) => events.push({ kind: 'load-end', index, batch, seq: seq++ })),
        fail?.kind === 'load' && fail.at >= begin && fail.at < end,
      )
    },
    compute: (begin, end) =>
      call(
        () => events.push({ kind: 'compute-start', begin, end, seq: seq++ }),
        () => events.push({ kind: 'compute-end', begin, end, seq: seq++ }),
        fail?.kind === 'compute' && fail.at === computeCalls++,
      ),
  }
  return { io, events, pending: () => pending, failedAt: () => failedAt }
}

/** Checks the dependency and order properties of a completed run; returns a list of violations. */
function violations(s: PipelineSchedule, events: readonly Event[]): string[] {
  const bad: string[] = []
  const at = (kind: Event['kind'], pred: (e: Event) => boolean): number => events.find((e) => e.kind === kind && pred(e))?.seq ?? NaN
  const loadEnd = (j: number): number => at('load-end', (e) => 'index' in e && e.index === j)
  const loadStart = (j: number): number => at('load-start', (e) => 'index' in e && e.index === j)
  const computes = events.filter((e): e is Extract<Event, { begin: number }> => e.kind === 'compute-start')
  const opEnd = (k: number): number => at('compute-end', (e) => 'begin' in e && e.begin <= k && k < e.end)
  // Ops in order, each exactly once: the compute calls tile [0, ops) left to right.
  let next = 0
  for (const c of computes) {
    if (c.begin !== next || !(c.end > c.begin)) bad.push(`compute [${c.begin}, ${c.end}) does not continue at op ${next}`)
    next = c.end
  }
  if (next !== s.ops) bad.push(`ops computed up to ${next}, expected ${s.ops}`)
  for (let i = 1; i < computes.length; i++) {
    const prevEnd = opEnd(computes[i - 1]!.begin)
    if (!(computes[i]!.seq > prevEnd)) bad.push(`compute [${computes[i]!.begin}, ...) started before the previous one finished`)
  }
  const loadStarts = events.filter((e) => e.kind === 'load-start').map((e) => ('index' in e ? e.index : -1))
  if (loadStarts.join() !== s.loads.map((_, j) => j).join()) bad.push(`loads started in order [${loadStarts}]`)
  const batchOf = (j: number): number => (events.find((e) => e.kind === 'load-start' && 'index' in e && e.index === j) as { batch?: number } | undefined)?.batch ?? -1
  s.loads.forEach((l, j) => {
    // A batch (one call) starts only after the previous batch finished.
    if (j > 0 && batchOf(j) !== batchOf(j - 1) && !(loadStart(j) > loadEnd(j - 1))) bad.push(`load ${j} started before load ${j - 1} finished`)
    if (l.after >= 0 && !(loadStart(j) > opEnd(l.after))) bad.push(`load ${j} started before op ${l.after} (its after) finished`)
  })
  for (const c of computes) {
    for (let k = c.begin; k < c.end; k++) {
      s.loads.forEach((l, j) => {
        if (l.step <= k && !(c.seq > loadEnd(j))) bad.push(`op ${k} started before load ${j} (step ${l.step}) finished`)
      })
    }
  }
  return bad
}

const show = (s: PipelineSchedule): string => `ops ${s.ops}, loads ${JSON.stringify(s.loads)}`

t.test('random schedules: dependencies hold, loads sequential and in order, every op once in order', async (t) => {
  const rand = seededRandom(seed)
  let withLoads = 0
  let batches = 0
  for (let i = 0; i < 200; i++) {
    const s = randomSchedule(rand)
    const fake = fakeIo(rand)
    await runPipeline(s, fake.io)
    const bad = violations(s, fake.events)
    if (fake.pending() !== 0) bad.push(`${fake.pending()} IO calls still running when the pipeline resolved`)
    if (bad.length > 0) t.fail(`seed ${seed} case ${i} (${show(s)}): ${bad.join('; ')}`)
    if (s.loads.length > 0) withLoads++
    batches += fake.events.filter((e) => e.kind === 'compute-start' && e.end - e.begin > 1).length
  }
  t.pass('200 random schedules checked')
  t.ok(withLoads > 130, `${withLoads} schedules had loads`)
  t.ok(batches > 30, `${batches} compute calls ran several ops`)
})

t.test('with no loads the pipeline is one compute call over all ops', async (t) => {
  for (const ops of [1, 2, 17]) {
    const fake = fakeIo(seededRandom(ops))
    await runPipeline({ ops, loads: [] }, fake.io)
    t.same(
      fake.events.map((e) => e.kind + ('begin' in e ? ` ${e.begin}-${e.end}` : '')),
      ['compute-start 0-' + ops, 'compute-end 0-' + ops],
      `${ops} ops`,
    )
  }
})

async function checkFailure(t: Test, kind: 'load' | 'compute', rand: Rand, i: number): Promise<boolean> {
  let s = randomSchedule(rand)
  while (kind === 'load' && s.loads.length === 0) s = randomSchedule(rand)
  // How many calls of this kind a clean run makes, to fail one of them.
  const clean = fakeIo(seededRandom(i))
  await runPipeline(s, clean.io)
  const calls = clean.events.filter((e) => e.kind === `${kind}-start`).length
  const error = new Error(`injected ${kind} failure`)
  const fake = fakeIo(rand, { kind, at: int(rand, 0, calls - 1), error })
  let caught: unknown
  try {
    await runPipeline(s, fake.io)
  } catch (err) {
    caught = err
  }
  const what = `seed ${seed} case ${i} (${show(s)})`
  if (caught !== error) {
    // The fake's call count can differ from the clean run's when batching changes; then nothing failed.
    if (fake.failedAt() === undefined) return false
    t.fail(`${what}: rejected with ${String(caught)}, expected the injected error`)
    return true
  }
  t.equal(fake.pending(), 0, `${what}: no IO still running when the pipeline rejects`)
  const failedAt = fake.failedAt()!
  const late = fake.events.filter((e) => e.kind.endsWith('-start') && e.seq > failedAt)
  t.same(late, [], `${what}: no IO issued after the failure`)
  // A few more turns of the event loop: still nothing new.
  const count = fake.events.length
  await new Promise((r) => setTimeout(r, 5))
  t.equal(fake.events.length, count, `${what}: nothing issued later either`)
  return true
}

for (const kind of ['load', 'compute'] as const) {
  t.test(`a failing ${kind} rejects the pipeline with its error and stops all IO`, async (t) => {
    const rand = seededRandom(seed + (kind === 'load' ? 1 : 2))
    let failed = 0
    for (let i = 0; i < 60; i++) if (await checkFailure(t, kind, rand, i)) failed++
    t.ok(failed > 40, `${failed} runs failed as injected`)
  })
}

t.test('a schedule with a load waiting for an op at or after its own step throws', async (t) => {
  for (const bad of [{ step: 2, after: 2 }, { step: 1, after: 3 }]) {
    const s: PipelineSchedule = { ops: 4, loads: [{ step: 0, after: -1 }, bad] }
    t.throws(() => loadsNeeded(s), { message: /pipeline: load 1 waits for op \d but op \d reads it/ })
    const fake = fakeIo(seededRandom(1))
    await t.rejects(runPipeline(s, fake.io), { message: /pipeline: load 1 waits for op/ })
    t.same(fake.events, [], 'no IO was issued')
  }
})

t.test('loadsNeeded counts, per op, the prefix of loads it needs', async (t) => {
  const need = loadsNeeded({ ops: 5, loads: [{ step: 1, after: -1 }, { step: 1, after: 0 }, { step: 3, after: 1 }] })
  t.same(Array.from(need), [0, 2, 2, 3, 3, 3])
})

t.test('loads whose dependencies already hold go out as one batch, up to batchBytes per call', async (t) => {
  const calls: Array<[number, number]> = []
  const io: PipelineIo = {
    load: async (begin, end) => {
      calls.push([begin, end])
    },
    compute: async () => undefined,
  }
  const mb = 1 << 20
  // Four free loads of 10 MiB: three fit one 32 MiB batch, the fourth starts the next.
  const free: PipelineSchedule = { ops: 4, loads: [0, 1, 2, 3].map((step) => ({ step, after: -1, bytes: 10 * mb })) }
  await runPipeline(free, io)
  t.same(calls, [[0, 3], [3, 4]], 'free loads batched by bytes')
  t.equal(batchBytes, 32 * mb, 'the batch limit the case assumes')
  // A load that waits for op 1 cannot join the batch before op 1 is done.
  calls.length = 0
  const waiting: PipelineSchedule = { ops: 4, loads: [{ step: 0, after: -1, bytes: mb }, { step: 2, after: 1, bytes: mb }, { step: 3, after: -1, bytes: mb }] }
  await runPipeline(waiting, io)
  t.same(calls, [[0, 1], [1, 3]], 'the batch stops at the first load whose op is not done')
})
