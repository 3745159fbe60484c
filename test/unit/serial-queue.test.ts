// SPDX-License-Identifier: Apache-2.0
// SerialQueue runs jobs one at a time in push order and survives failures.
import t from 'tap'
import { SerialQueue } from '../../lib/runtime/serial-queue.js'

t.test('jobs run one after another in push order', async (t) => {
  const q = new SerialQueue()
  const log: string[] = []
  let running = 0
  const job = (name: string, ms: number) => async () => {
    running++
    t.equal(running, 1, `${name} runs alone`)
    log.push(`start ${name}`)
    await new Promise((r) => setTimeout(r, ms))
    log.push(`end ${name}`)
    running--
    return name
  }
  const results = await Promise.all([q.push(job('a', 20)), q.push(job('b', 1)), q.push(job('c', 5))])
  t.same(results, ['a', 'b', 'c'])
  t.same(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
})

t.test('a rejected job does not stop later jobs', async (t) => {
  const q = new SerialQueue()
  const failed = q.push(async () => {
    throw new Error('boom')
  })
  const next = q.push(async () => 42)
  await t.rejects(failed, { message: 'boom' })
  t.equal(await next, 42)
  await q.idle()
})
