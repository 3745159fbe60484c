// SPDX-License-Identifier: Apache-2.0
// The HTTP surface: one engine per model, each behind its own bounded queue.
//   POST /v1/models/:model/infer   run the model (JSON or raw body, see codec.ts)
//   GET  /v1/models                 the models and their inputs
//   GET  /healthz                   200 while serving, 503 while draining
//   GET  /metrics                   Prometheus text: queues, latency quantiles, memory budget, RSS
// Status codes a client acts on: 400 (the request is wrong; the body says what), 404 (no such model),
// 429 + Retry-After (the queue is full: back off), 503 + Retry-After (shutting down: go elsewhere), 504
// (the request's deadline passed: x-timeout-ms, or the server's default).
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import { InputError, ShapeError } from 'flexpipe'
import { AdmissionQueue, Cancelled, DeadlineExceeded, type Refusal } from './admission.js'
import type { ModelBackend } from './backends.js'
import { BadRequest, decodeJson, decodeRaw, encodeOutputs } from './codec.js'
import { ModelMetrics, renderMetrics } from './metrics.js'

export interface ServedModel {
  readonly name: string
  readonly backend: ModelBackend
}

export interface ServerOptions {
  readonly models: readonly ServedModel[]
  /** Requests that may wait per model while one runs; more get 429. */
  readonly queueLimit: number
  /** A request's deadline from its arrival (ms) unless its x-timeout-ms asks for less. */
  readonly timeoutMs: number
  /** The largest request body (bytes). */
  readonly bodyLimit: number
  /** This process's RSS before the models opened (reported in /metrics). */
  readonly rssBeforeModels: number
  readonly logger?: boolean
}

export interface InferenceServer {
  readonly app: FastifyInstance
  /** Refuses new requests (503), finishes admitted ones, closes the listener, then the engines. */
  shutdown(): Promise<void>
}

interface Served {
  readonly backend: ModelBackend
  readonly queue: AdmissionQueue
  readonly metrics: ModelMetrics
}

function errorBody(code: string, message: string) {
  return { error: { code, message } }
}

export function buildServer(options: ServerOptions): InferenceServer {
  const served = new Map<string, Served>()
  for (const m of options.models) {
    if (served.has(m.name)) throw new Error(`two models named ${m.name}`)
    served.set(m.name, { backend: m.backend, queue: new AdmissionQueue(options.queueLimit), metrics: new ModelMetrics() })
  }
  let draining = false
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: options.bodyLimit })
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: options.bodyLimit }, (_req, body, done) => done(null, body))

  // while draining, every response closes its connection: a keep-alive connection busy when the drain
  // began would otherwise stay open after its last response and hold the listener's close
  app.addHook('onSend', async (_req, reply) => {
    if (draining) reply.header('connection', 'close')
  })

  app.get('/healthz', async (_req, reply) => {
    if (draining) return reply.code(503).send({ status: 'draining' })
    return { status: 'ok', models: [...served.keys()] }
  })

  app.get('/v1/models', async () => ({
    models: [...served].map(([name, s]) => ({ name, engine: s.backend.engine, inputs: s.backend.inputs })),
  }))

  app.get('/metrics', async (_req, reply) => {
    const gauges = [...served].map(([name, s]) => ({
      name,
      engine: s.backend.engine,
      queueDepth: s.queue.depth,
      queueDepthMax: s.queue.maxDepth,
      queueLimit: s.queue.limit,
      inflight: s.queue.inflight,
      ...s.backend.memory(),
      metrics: s.metrics,
    }))
    return reply.type('text/plain; version=0.0.4').send(renderMetrics(gauges, { rssBeforeModels: options.rssBeforeModels, draining }))
  })

  const refuse = (reply: FastifyReply, s: Served, refusal: Refusal) => {
    const status = refusal === 'full' ? 429 : 503
    s.metrics.countResponse(status)
    return reply
      .code(status)
      .header('retry-after', String(refusal === 'full' ? s.queue.retryAfterSeconds() : 5))
      .send(
        refusal === 'full'
          ? errorBody('ERR_QUEUE_FULL', `the queue of ${s.queue.limit} is full; retry after the Retry-After seconds`)
          : errorBody('ERR_DRAINING', 'the server is shutting down; retry on another instance'),
      )
  }

  app.post<{ Params: { model: string } }>(
    '/v1/models/:model/infer',
    {
      // refused before its body is read: under a flood, reading and parsing bodies that will not run
      // would take the cores the admitted requests need
      onRequest: async (req, reply) => {
        const s = served.get(req.params.model)
        const refusal = draining ? 'draining' : s?.queue.wouldRefuse()
        if (s !== undefined && refusal !== undefined) return refuse(reply, s, refusal)
      },
    },
    async (req, reply) => {
      const arrived = performance.now()
      const s = served.get(req.params.model)
      if (s === undefined) return reply.code(404).send(errorBody('ERR_NO_MODEL', `no model ${JSON.stringify(req.params.model)}; GET /v1/models lists them`))
      const count = (status: number) => s.metrics.countResponse(status)
      const fail = (status: number, code: string, message: string) => {
        count(status)
        return reply.code(status).send(errorBody(code, message))
      }
      let feeds
      try {
        const type = req.headers['content-type'] ?? ''
        const dims = req.headers['x-dims']
        feeds = type.startsWith('application/octet-stream')
          ? decodeRaw(s.backend.inputs, req.body as Buffer, typeof dims === 'string' ? dims : undefined)
          : decodeJson(s.backend.inputs, req.body)
      } catch (err) {
        if (!(err instanceof BadRequest)) throw err
        return fail(400, err.code, err.message)
      }
      const asked = Number(req.headers['x-timeout-ms'])
      const timeoutMs = Number.isFinite(asked) && asked > 0 ? Math.min(asked, options.timeoutMs) : options.timeoutMs
      const deadline = Date.now() + timeoutMs

      const admission = s.queue.submit(() => s.backend.infer(feeds), deadline)
      if (!admission.admitted) return refuse(reply, s, admission.refusal)
      // a client that goes away while its request waits frees the place (autocannon's stop, a proxy's timeout)
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) admission.cancel()
      })
      // a request already running when its deadline passes is answered 504 now; its result is dropped
      admission.result.catch(() => undefined)
      let timer: NodeJS.Timeout | undefined
      const expired = new Promise<'expired'>((resolve) => {
        timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()))
      })
      try {
        const r = await Promise.race([admission.result, expired])
        if (r === 'expired') {
          return fail(504, 'ERR_DEADLINE', `no result within ${timeoutMs} ms`)
        }
        s.metrics.inferenceSeconds.add(r.timing.serviceMs / 1000)
        s.metrics.requestSeconds.add((performance.now() - arrived) / 1000)
        count(200)
        return { model: req.params.model, outputs: encodeOutputs(r.value), timing: { queueMs: r.timing.queueMs, inferMs: r.timing.serviceMs } }
      } catch (err) {
        if (err instanceof Cancelled) {
          return fail(499, 'ERR_CANCELLED', err.message)
        }
        if (err instanceof DeadlineExceeded) {
          return fail(504, 'ERR_DEADLINE', err.message)
        }
        // the engines check feeds against the model too (symbolic dims that must agree, values)
        if (err instanceof InputError || err instanceof ShapeError) {
          return fail(400, err.code, err.message)
        }
        req.log.error(err)
        const e = err as { code?: unknown; message?: unknown }
        return fail(500, typeof e.code === 'string' ? e.code : 'ERR_INTERNAL', String(e.message ?? err))
      } finally {
        clearTimeout(timer)
      }
    },
  )

  return {
    app,
    async shutdown() {
      if (draining) return
      draining = true
      for (const s of served.values()) s.queue.close()
      // fastify waits for the requests in flight (the admitted ones among them), answers new ones on
      // open connections 503 and closes idle keep-alive connections
      await app.close()
      await Promise.all([...served.values()].map((s) => s.queue.idle()))
      await Promise.all([...served.values()].map((s) => s.backend.close()))
    },
  }
}
