// SPDX-License-Identifier: Apache-2.0
// The server example's bounded queue (examples/server/admission.ts): it admits up to its limit, refuses
// beyond, runs in arrival order, drops a waiter whose deadline passes, drains on close — and under random
// traffic never holds more than its bound.
import t from 'tap'
import { AdmissionQueue, Cancelled, DeadlineExceeded, retryAfterSeconds } from '../../examples/server/admission.js'
import { seededRandom } from '../../lib/cli/inputs.js'

/** Work that finishes when the test says so. */
function controllable() {
  const started: number[] = []
  const finishers = new Map<number, () => void>()
  const work = (id: number) => () =>
    new Promise<number>((resolve) => {
      started.push(id)
      finishers.set(id, () => resolve(id))
    })
  const finish = async (id: number) => {
    finishers.get(id)!()
    await new Promise((r) => setImmediate(r))
  }
  return { started, work, finish }
}

const far = () => Date.now() + 60_000

t.test('admits up to the limit, refuses beyond, runs in arrival order', async (t) => {
  const q = new AdmissionQueue(2)
  const c = controllable()
  const a = [1, 2, 3, 4].map((id) => q.submit(c.work(id), far()))
  t.same(a.map((x) => x.admitted), [true, true, true, false])
  t.equal((a[3] as { refusal: string }).refusal, 'full')
  t.same(c.started, [1], 'one runs, two wait')
  t.equal(q.depth, 2)
  t.equal(q.inflight, 1)
  await c.finish(1)
  t.same(c.started, [1, 2])
  t.equal(q.submit(c.work(5), far()).admitted, true, 'a freed place is taken again')
  t.equal(q.maxDepth, 2)
  await c.finish(2)
  await c.finish(3)
  await c.finish(5)
  t.same(c.started, [1, 2, 3, 5])
  const r = await (a[0] as { result: Promise<{ value: number; timing: { queueMs: number; serviceMs: number } }> }).result
  t.equal(r.value, 1)
  t.ok(r.timing.serviceMs >= 0 && r.timing.queueMs >= 0)
})

t.test('a waiter past its deadline is dropped without running and frees its place', async (t) => {
  const q = new AdmissionQueue(1)
  const c = controllable()
  q.submit(c.work(1), far())
  const late = q.submit(c.work(2), Date.now() + 20)
  if (!late.admitted) throw new Error('admitted expected')
  await t.rejects(late.result, DeadlineExceeded)
  t.equal(q.depth, 0)
  t.equal(q.submit(c.work(3), far()).admitted, true)
  await c.finish(1)
  t.same(c.started, [1, 3], 'the expired request never ran')
  await c.finish(3)
})

t.test('a cancelled waiter is dropped without running; cancelling a running request changes nothing', async (t) => {
  const q = new AdmissionQueue(2)
  const c = controllable()
  const running = q.submit(c.work(1), far())
  const waiting = q.submit(c.work(2), far())
  if (!running.admitted || !waiting.admitted) throw new Error('admitted expected')
  t.equal(q.wouldRefuse(), undefined)
  q.submit(c.work(3), far())
  t.equal(q.wouldRefuse(), 'full')
  waiting.cancel()
  running.cancel()
  await t.rejects(waiting.result, Cancelled)
  t.equal(q.depth, 1)
  t.equal(q.wouldRefuse(), undefined, 'the cancelled place is free again')
  await c.finish(1)
  t.equal((await running.result).value, 1)
  await c.finish(3)
  t.same(c.started, [1, 3])
})

t.test('a failing inference frees its slot and rejects its request only', async (t) => {
  const q = new AdmissionQueue(1)
  const bad = q.submit(() => Promise.reject(new Error('engine failed')), far())
  const good = q.submit(async () => 7, far())
  if (!bad.admitted || !good.admitted) throw new Error('admitted expected')
  await t.rejects(bad.result, /engine failed/)
  t.equal((await good.result).value, 7)
  t.equal(q.inflight, 0)
})

t.test('close refuses new work, lets admitted work finish, then idles', async (t) => {
  const q = new AdmissionQueue(4)
  const c = controllable()
  q.submit(c.work(1), far())
  q.submit(c.work(2), far())
  q.close()
  const refused = q.submit(c.work(3), far())
  t.same(refused, { admitted: false, refusal: 'draining' })
  let idle = false
  const done = q.idle().then(() => (idle = true))
  await c.finish(1)
  t.equal(idle, false, 'one is still waiting')
  await c.finish(2)
  await done
  t.same(c.started, [1, 2])
})

t.test('Retry-After: the queue ahead at the service time, in whole seconds, at least one', async (t) => {
  t.equal(retryAfterSeconds(0, 1, 5000), 1, 'nothing ahead: one second')
  t.equal(retryAfterSeconds(9, 1, 30), 1, 'under a second ahead: one')
  t.equal(retryAfterSeconds(100, 1, 30), 3)
  t.equal(retryAfterSeconds(100, 2, 30), 2, 'two at a time halve it')
  t.equal(retryAfterSeconds(64, 1, 1000), 64)
  // the queue's own estimate: whatever this machine's service times, at least one whole second
  const q = new AdmissionQueue(8)
  t.equal(q.retryAfterSeconds(), 1, 'no service measured yet, nothing ahead')
  const c = controllable()
  for (let i = 0; i < 9; i++) q.submit(c.work(i), far())
  const s = q.retryAfterSeconds()
  t.ok(Number.isInteger(s) && s >= 1)
  for (let i = 0; i < 9; i++) await c.finish(i)
})

t.test('under random arrivals and completions the queue never exceeds its bound', async (t) => {
  for (const [limit, concurrency, seed] of [
    [0, 1, 1],
    [1, 1, 2],
    [3, 1, 3],
    [5, 2, 4],
  ] as const) {
    const q = new AdmissionQueue(limit, concurrency)
    const rand = seededRandom(seed)
    const c = controllable()
    const running = new Set<number>()
    let next = 0
    let admitted = 0
    let refused = 0
    for (let step = 0; step < 400; step++) {
      if (rand() < 0.6) {
        const id = next++
        const a = q.submit(() => {
          running.add(id)
          return c.work(id)()
        }, far())
        if (a.admitted) {
          admitted++
          a.result.then(() => running.delete(id))
        } else refused++
      } else if (running.size > 0) {
        const id = [...running][Math.floor(rand() * running.size)]!
        await c.finish(id)
      }
      if (q.depth > limit || q.inflight > concurrency) t.fail(`step ${step}: depth ${q.depth}/${limit}, inflight ${q.inflight}/${concurrency}`)
    }
    while (running.size > 0) await c.finish([...running][0]!)
    await q.idle()
    t.equal(c.started.length, admitted, `limit ${limit}: every admitted request ran`)
    t.ok(refused > 0, `limit ${limit}: traffic overflowed it (${refused} refused)`)
    t.ok(q.maxDepth <= limit)
  }
})
