#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// An inference server on flexpipe: opens each --model once, serves it behind a bounded queue, drains on
// SIGTERM/SIGINT. See examples/server/README.md.
//   node dist/examples/server/server.js --model mobilenet=mobilenetv2.onnx [--port 8080] [--queue 32]
import { parseArgs } from 'node:util'
import { buildServer, type ServedModel } from './app.js'
import { openFlexpipe, openOnnxruntime } from './backends.js'
import { residentMemory } from './metrics.js'

const usage = `usage: server.js --model <name>=<model.onnx|package.fpk> [--model ...]
  [--engine flexpipe|onnxruntime] [--threads N] [--budget 64MB|auto (packages)]
  [--host 127.0.0.1] [--port 8080 (0: any free port)] [--queue 32] [--timeout-ms 5000]
  [--body-limit 16MB] [--drain-ms 30000] [--log]`

function bytes(text: string, what: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?$/i.exec(text.trim())
  if (m === null) throw new Error(`${what}: expected a size such as 64MB, got ${text}`)
  const unit = (m[2] ?? 'B').toLowerCase()
  const scale: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 }
  return Math.round(Number(m[1]) * scale[unit]!)
}

function integer(text: string | undefined, what: string, fallback: number, min: number): number {
  if (text === undefined) return fallback
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${what}: expected an integer >= ${min}, got ${text}`)
  return n
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', multiple: true, default: [] },
      engine: { type: 'string', default: 'flexpipe' },
      threads: { type: 'string' },
      budget: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8080' },
      queue: { type: 'string' },
      'timeout-ms': { type: 'string' },
      'body-limit': { type: 'string', default: '16MB' },
      'drain-ms': { type: 'string' },
      log: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help || values.model.length === 0) {
    console.log(usage)
    process.exit(values.help ? 0 : 2)
  }
  const engine = values.engine
  if (engine !== 'flexpipe' && engine !== 'onnxruntime') throw new Error(`--engine: flexpipe or onnxruntime, got ${engine}`)
  const threads = values.threads === undefined ? undefined : integer(values.threads, '--threads', 0, 1)
  const memoryBudget: number | 'auto' | undefined = values.budget === undefined ? undefined : values.budget === 'auto' ? 'auto' : bytes(values.budget, '--budget')
  const rssBeforeModels = residentMemory().rss

  const models: ServedModel[] = []
  for (const spec of values.model) {
    const at = spec.indexOf('=')
    if (at <= 0) throw new Error(`--model: expected <name>=<path>, got ${spec}`)
    const [name, path] = [spec.slice(0, at), spec.slice(at + 1)]
    const opts = { ...(threads === undefined ? {} : { threads }), ...(memoryBudget === undefined ? {} : { memoryBudget }) }
    models.push({ name, backend: engine === 'flexpipe' ? await openFlexpipe(path, opts) : await openOnnxruntime(path, opts) })
  }

  const server = buildServer({
    models,
    queueLimit: integer(values.queue, '--queue', 32, 0),
    timeoutMs: integer(values['timeout-ms'], '--timeout-ms', 5000, 1),
    bodyLimit: bytes(values['body-limit'], '--body-limit'),
    rssBeforeModels,
    logger: values.log,
  })
  const address = await server.app.listen({ host: values.host, port: integer(values.port, '--port', 8080, 0) })
  // one JSON line: what a supervisor or the load test reads to find the server
  console.log(JSON.stringify({ listening: address, pid: process.pid, engine, models: models.map((m) => m.name) }))

  const drainMs = integer(values['drain-ms'], '--drain-ms', 30000, 1)
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) {
      console.error(`${signal} again: exiting without draining`)
      process.exit(1)
    }
    stopping = true
    const force = setTimeout(() => {
      console.error(`requests still in flight after ${drainMs} ms: exiting`)
      process.exit(1)
    }, drainMs)
    force.unref()
    server.shutdown().then(
      () => {
        console.log(JSON.stringify({ drained: true, signal }))
        process.exit(0)
      },
      (err: unknown) => {
        console.error(err)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

main().catch((err: unknown) => {
  const e = err as { code?: string; message?: string }
  console.error(`server: ${e.code === undefined ? '' : `${e.code}: `}${e.message ?? String(err)}`)
  process.exit(1)
})
