// SPDX-License-Identifier: Apache-2.0
// The server example as a user runs it: a process on a real model. Its answers equal the engine's own
// (raw and JSON bodies), both engines' servers agree, a burst far beyond the queue gets only 200s and
// 429s with the queue never past its bound, and SIGTERM drains: requests in flight finish, the process
// exits 0.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { join } from 'node:path'
import t from 'tap'
import { open } from '../../lib/index.js'
import { parseMetrics } from '../../examples/server/metrics.js'
import { fixtures, randomFloat, repoRoot } from '../helpers/data.js'

const model = join(fixtures, 'models', 'mobilenetv2_small.onnx')
const serverJs = join(repoRoot, 'dist', 'examples', 'server', 'server.js')

interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly exited: Promise<{ code: number | null; stdout: string[] }>
}

async function start(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [serverJs, '--port', '0', '--threads', '1', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  const stdout: string[] = []
  const lines = createInterface({ input: child.stdout! })
  const exited = new Promise<{ code: number | null; stdout: string[] }>((resolve) => child.on('exit', (code) => resolve({ code, stdout })))
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      stdout.push(line)
      if (stdout.length === 1) resolve((JSON.parse(line) as { listening: string }).listening)
    })
    child.on('exit', (code) => reject(new Error(`server exited with ${code} before listening`)))
  })
  return { child, url, exited }
}

const input = randomFloat([1, 3, 96, 96], 11)
const raw = Buffer.from((input.data as Float32Array).buffer)

function inferRaw(url: string): Promise<Response> {
  return fetch(`${url}/v1/models/m/infer`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-dims': '1,3,96,96' }, body: raw })
}

t.test('answers equal the engine\'s, for raw and JSON bodies, on flexpipe and on onnxruntime', async (t) => {
  const engine = await open(model as `${string}.onnx`, { threads: 1 })
  const expected = Array.from((await engine.infer({ input })).logits!.data as Float32Array)
  await engine.close()
  for (const name of ['flexpipe', 'onnxruntime']) {
    const s = await start(['--engine', name, '--model', `m=${model}`])
    t.teardown(() => void s.child.kill('SIGKILL'))
    const a = (await (await inferRaw(s.url)).json()) as { outputs: { logits: { dims: number[]; data: number[] } } }
    const b = (await (
      await fetch(`${s.url}/v1/models/m/infer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: { input: { dims: [1, 3, 96, 96], data: Array.from(input.data as Float32Array) } } }),
      })
    ).json()) as typeof a
    t.same(a.outputs.logits.dims, [1, 100])
    t.same(b.outputs.logits.data, a.outputs.logits.data, `${name}: JSON and raw bodies give the same result`)
    const worst = Math.max(...a.outputs.logits.data.map((v, i) => Math.abs(v - expected[i]!)))
    if (name === 'flexpipe') t.equal(worst, 0, 'flexpipe\'s server returns exactly what the engine returns')
    else t.ok(worst < 1e-4, `onnxruntime's server agrees with flexpipe within 1e-4 (worst ${worst})`)
    s.child.kill('SIGTERM')
    t.equal((await s.exited).code, 0)
  }
})

t.test('a burst of 48 concurrent requests on a queue of 2: only 200s and 429s, the bound holds, the server lives', async (t) => {
  const s = await start(['--model', `m=${model}`, '--queue', '2'])
  t.teardown(() => void s.child.kill('SIGKILL'))
  const statuses = await Promise.all(Array.from({ length: 48 }, () => inferRaw(s.url).then(async (r) => (await r.arrayBuffer(), r.status))))
  const counts = new Map<number, number>()
  for (const c of statuses) counts.set(c, (counts.get(c) ?? 0) + 1)
  t.same([...counts.keys()].sort(), [...counts.keys()].filter((c) => c === 200 || c === 429).sort(), `statuses ${JSON.stringify([...counts])}`)
  t.ok((counts.get(200) ?? 0) >= 1, 'some were served')
  const m = parseMetrics(await (await fetch(`${s.url}/metrics`)).text())
  const l = 'model="m",engine="flexpipe"'
  t.ok(m.get(`flexpipe_queue_depth_max{${l}}`)! <= 2, 'the queue never held more than 2')
  t.equal(m.get(`flexpipe_responses_total{${l},code="200"}`) ?? 0, counts.get(200) ?? 0)
  t.equal(m.get(`flexpipe_responses_total{${l},code="429"}`) ?? 0, counts.get(429) ?? 0)
  t.equal((await fetch(`${s.url}/healthz`)).status, 200)
  s.child.kill('SIGTERM')
  t.equal((await s.exited).code, 0)
})

t.test('SIGTERM drains: the requests in flight finish with 200, then the process exits 0', async (t) => {
  const s = await start(['--model', `m=${model}`, '--queue', '16'])
  t.teardown(() => void s.child.kill('SIGKILL'))
  const inflight = Array.from({ length: 8 }, () => inferRaw(s.url).then((r) => r.status))
  // wait until the server holds them (all admitted: one running, the rest queued)
  for (;;) {
    const m = parseMetrics(await (await fetch(`${s.url}/metrics`)).text())
    const l = 'model="m",engine="flexpipe"'
    if ((m.get(`flexpipe_queue_depth{${l}}`) ?? 0) + (m.get(`flexpipe_inflight{${l}}`) ?? 0) + (m.get(`flexpipe_responses_total{${l},code="200"}`) ?? 0) >= 8) break
    await new Promise((r) => setTimeout(r, 2))
  }
  s.child.kill('SIGTERM')
  t.same(await Promise.all(inflight), Array(8).fill(200))
  const { code, stdout } = await s.exited
  t.equal(code, 0)
  t.match(stdout.at(-1), /"drained":true/)
  await t.rejects(fetch(`${s.url}/healthz`), 'the listener is closed')
})
