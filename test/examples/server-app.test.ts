// SPDX-License-Identifier: Apache-2.0
// The server example's HTTP behaviour (examples/server/app.ts) with an engine the test finishes by hand,
// so every overload case is exact: 429 + Retry-After when the queue is full, 504 past a deadline queued
// or running, 400 for bad requests before they queue, 404, the metrics, and a drain that finishes
// admitted requests while refusing new ones.
import t from 'tap'
import { InputError, type Tensor } from 'flexpipe'
import { buildServer } from '../../examples/server/app.js'
import type { ModelBackend } from '../../examples/server/backends.js'
import { parseMetrics } from '../../examples/server/metrics.js'

function handBackend() {
  const pending: { feeds: Record<string, Tensor>; finish: () => void; fail: (e: Error) => void }[] = []
  let closed = false
  const backend: ModelBackend = {
    engine: 'flexpipe',
    inputs: [{ name: 'x', dtype: 'float32', dims: ['batch', 2] }],
    infer: (feeds) =>
      new Promise((resolve, reject) => {
        const x = feeds.x!
        const y: Tensor = { dtype: 'float32', dims: x.dims, data: Float32Array.from(x.data as Float32Array, (v) => v * 2) }
        pending.push({ feeds, finish: () => resolve({ y }), fail: reject })
      }),
    memory: () => ({ memoryBudgetBytes: 1_000_000, arenaBytes: 250_000 }),
    close: async () => {
      closed = true
    },
  }
  const reached = async (n: number) => {
    while (pending.length < n) await new Promise((r) => setTimeout(r, 1))
  }
  return { backend, pending, reached, isClosed: () => closed }
}

const body = (v: number[]) => ({ inputs: { x: { dims: [v.length / 2, 2], data: v } } })

function serve(queueLimit: number, timeoutMs = 60_000) {
  const h = handBackend()
  const server = buildServer({ models: [{ name: 'm', backend: h.backend }], queueLimit, timeoutMs, bodyLimit: 1 << 20, rssBeforeModels: 1 })
  const infer = (payload: unknown, headers: Record<string, string> = {}) => server.app.inject({ method: 'POST', url: '/v1/models/m/infer', payload: payload as object, headers })
  return { ...h, server, infer }
}

t.test('a result, then 429 with Retry-After once one runs and the queue of 2 is full', async (t) => {
  const s = serve(2)
  t.teardown(() => s.server.app.close())
  const first = s.infer(body([1, 2]))
  await s.reached(1)
  const waiting = [s.infer(body([3, 4])), s.infer(body([5, 6]))]
  await new Promise((r) => setTimeout(r, 10))
  const refused = await s.infer(body([7, 8]))
  t.equal(refused.statusCode, 429)
  t.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After in whole seconds')
  t.equal(refused.json().error.code, 'ERR_QUEUE_FULL')
  for (let i = 0; i < 3; i++) {
    await s.reached(i + 1)
    s.pending[i]!.finish()
  }
  const r = await first
  t.equal(r.statusCode, 200)
  t.same(r.json().outputs.y, { dtype: 'float32', dims: [1, 2], data: [2, 4] })
  t.same((await Promise.all(waiting)).map((x) => x.json().outputs.y.data), [[6, 8], [10, 12]], 'the queued ones ran in order')
  const m = parseMetrics((await s.server.app.inject({ url: '/metrics' })).body)
  const l = 'model="m",engine="flexpipe"'
  t.equal(m.get(`flexpipe_queue_depth_max{${l}}`), 2)
  t.equal(m.get(`flexpipe_queue_limit{${l}}`), 2)
  t.equal(m.get(`flexpipe_responses_total{${l},code="200"}`), 3)
  t.equal(m.get(`flexpipe_responses_total{${l},code="429"}`), 1)
  t.equal(m.get(`flexpipe_request_duration_seconds_count{${l}}`), 3)
  t.equal(m.get(`flexpipe_memory_budget_bytes{${l}}`), 1_000_000)
  t.equal(m.get('flexpipe_rss_before_models_bytes'), 1)
  t.ok(m.get('process_resident_memory_bytes')! > 0)
})

t.test('504 for a request whose deadline passes in the queue (never run) or while running', async (t) => {
  const s = serve(4)
  t.teardown(() => s.server.app.close())
  const running = s.infer(body([1, 2]), { 'x-timeout-ms': '30' })
  await s.reached(1)
  const queued = s.infer(body([3, 4]), { 'x-timeout-ms': '20' })
  const [a, b] = await Promise.all([running, queued])
  t.equal(a.statusCode, 504, 'the running one is answered at its deadline')
  t.equal(b.statusCode, 504)
  t.match(b.json().error.message, /waited/)
  s.pending[0]!.finish()
  await new Promise((r) => setTimeout(r, 5))
  t.equal(s.pending.length, 1, 'the expired queued request never reached the engine')
})

t.test('bad requests are 400s that say what is wrong and never reach the engine; 404 for no model', async (t) => {
  const s = serve(4)
  t.teardown(() => s.server.app.close())
  const cases: [unknown, Record<string, string>, RegExp][] = [
    [{}, {}, /expected \{"inputs"/],
    [{ inputs: { y: { dims: [1, 2], data: [1, 2] } } }, {}, /unknown input "y"/],
    [{ inputs: { x: { dims: [1, 3], data: [1, 2, 3] } } }, {}, /dim 1 must be 2/],
    [{ inputs: { x: { dims: [1, 2], data: [1] } } }, {}, /need 2 elements, got 1/],
    [{ inputs: { x: { dims: [1, 2], data: [1, 'a'] } } }, {}, /finite numbers/],
    [Buffer.alloc(12), { 'content-type': 'application/octet-stream', 'x-dims': '1,2' }, /need 8 bytes, got 12/],
    [Buffer.alloc(8), { 'content-type': 'application/octet-stream' }, /symbolic dims/],
    [Buffer.alloc(8), { 'content-type': 'application/octet-stream', 'x-dims': '1,x' }, /non-negative integers/],
  ]
  for (const [payload, headers, message] of cases) {
    const r = await s.infer(payload, headers)
    t.equal(r.statusCode, 400, String(message))
    t.match(r.json().error.message, message)
  }
  const raw = s.infer(Buffer.from(new Float32Array([1.5, 2.5]).buffer), { 'content-type': 'application/octet-stream', 'x-dims': '1,2' })
  await s.reached(1)
  s.pending[0]!.finish()
  t.same((await raw).json().outputs.y.data, [3, 5], 'a raw body is read as the input dtype')
  t.equal(s.pending.length, 1, 'only the good request reached the engine')
  const none = await s.server.app.inject({ method: 'POST', url: '/v1/models/other/infer', payload: body([1, 2]) })
  t.equal(none.statusCode, 404)
})

t.test('refused before the body is read: a full queue answers 429 even to a body it could not parse', async (t) => {
  const s = serve(0)
  t.teardown(() => s.server.app.close())
  const a = s.infer(body([1, 2]))
  await s.reached(1)
  const r = await s.infer('not json at all', { 'content-type': 'application/json' })
  t.equal(r.statusCode, 429, 'the onRequest check answered before the JSON parser ran')
  s.pending[0]!.finish()
  t.equal((await a).statusCode, 200)
})

t.test("the engine's own input errors are 400s; its other failures 500s", async (t) => {
  const s = serve(4)
  t.teardown(() => s.server.app.close())
  const a = s.infer(body([1, 2]))
  await s.reached(1)
  s.pending[0]!.fail(new InputError('input x: values out of range'))
  t.equal((await a).statusCode, 400)
  t.equal((await a).json().error.code, new InputError('').code)
  const b = s.infer(body([1, 2]))
  await s.reached(2)
  s.pending[1]!.fail(new Error('native failure'))
  t.equal((await b).statusCode, 500)
})

t.test('shutdown finishes admitted requests, refuses new ones with 503, then closes the engine', async (t) => {
  const s = serve(4)
  const admitted = [s.infer(body([1, 2])), s.infer(body([3, 4]))]
  await s.reached(1)
  const down = s.server.shutdown()
  const late = await s.infer(body([5, 6]))
  t.equal(late.statusCode, 503)
  t.ok(Number(late.headers['retry-after']) >= 1)
  t.equal(s.isClosed(), false, 'the engine stays open while requests are admitted')
  s.pending[0]!.finish()
  await s.reached(2)
  s.pending[1]!.finish()
  t.same((await Promise.all(admitted)).map((r) => r.statusCode), [200, 200])
  await down
  t.equal(s.isClosed(), true)
})

t.test('health says draining during shutdown', async (t) => {
  const s = serve(1)
  t.equal((await s.server.app.inject({ url: '/healthz' })).statusCode, 200)
  const a = s.infer(body([1, 2]))
  await s.reached(1)
  const down = s.server.shutdown()
  // fastify answers requests arriving while it closes 503 itself; either way not 200
  t.equal((await s.server.app.inject({ url: '/healthz' })).statusCode, 503)
  s.pending[0]!.finish()
  await a
  await down
})
