// SPDX-License-Identifier: Apache-2.0
// How a plain run travels (native/addon/workers/lane_run.h): the JS thread hands it to the session's
// compute lane and the lane settles it on the JS thread, so a run in flight holds no libuv pool
// thread; it keeps the event loop alive until it settles, and an idle session does not.
// Each case runs in a fresh Node process: the pool's size is fixed at its first use, and whether a
// process exits on its own is the behaviour under test.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { repoRoot } from '../helpers/data.js'

const url = (...p: string[]) => JSON.stringify(pathToFileURL(join(repoRoot, 'dist', ...p)).href)

// A session whose one program applies sin 90 times to 4 MiB (a run of 0.1-1 s), its input, and run(out).
const prelude = `
  import { binding } from ${url('lib', 'native', 'binding.js')}
  import { program, unaryOp } from ${url('test', 'helpers', 'program.js')}
  import { UnaryCode } from ${url('lib', 'model', 'ops', 'eltwise-codes.js')}
  const n = 1 << 20
  const threads = Number(process.env.THREADS)
  const s = new (binding().Session)(threads, 'auto')
  s.resize(2 * n * 4, 0)
  const ops = Array.from({ length: 90 }, (_, i) => unaryOp(UnaryCode.sin, i % 2, 1 - (i % 2)))
  const id = s.addProgram(program([[1, 0, 1, n], [1, n * 4, 1, n]], ops))
  const x = Float32Array.from({ length: n }, (_, i) => (i % 1000) / 500 - 1)
  const run = (out) => s.run(id, 0, [[0, x]], [[0, out]])
`

function child(script: string, threads: number, env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', prelude + script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, THREADS: String(threads), ...env },
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

for (const threads of [1, 2]) {
  t.test(`a run in flight holds no libuv pool thread (${threads} thread${threads > 1 ? 's' : ''}, a pool of one)`, async (t) => {
    const r = child(
      `
      import { readFile } from 'node:fs/promises'
      const events = []
      const y = new Float32Array(n)
      const pending = run(y).then(() => events.push('run'))
      await readFile(${JSON.stringify(join(repoRoot, 'package.json'))})
      events.push('readFile')
      await pending
      // the output is the 90-fold sine of x (the last op writes tensor 0 again)
      let v = x[7]
      for (let i = 0; i < 90; i++) v = Math.fround(Math.sin(v))
      console.log(JSON.stringify({ events, got: y[7], want: v }))
      s.dispose()`,
      threads,
      { UV_THREADPOOL_SIZE: '1' },
    )
    t.equal(r.status, 0, `child exited cleanly ${r.stderr}`)
    const out = JSON.parse(r.stdout) as { events: string[]; got: number; want: number }
    t.same(out.events, ['readFile', 'run'], "a file read on the pool's only thread finished while the run was in flight")
    t.ok(Math.abs(out.got - out.want) < 1e-4, `the run's output is right (${out.got} vs ${out.want})`)
  })

  t.test(`a run in flight keeps the process alive; an idle session does not (${threads} thread${threads > 1 ? 's' : ''})`, async (t) => {
    // Nothing else is pending while the run is in flight: the process must wait for it to settle.
    const pending = child(`run(new Float32Array(n)).then(() => console.log('settled'))`, threads)
    t.equal(pending.status, 0, `child exited cleanly ${pending.stderr}`)
    t.equal(pending.stdout.trim(), 'settled', 'the run settled before the process exited')
    // After a settled run the session is idle but not disposed: the process exits by itself.
    const idle = child(`await run(new Float32Array(n)); await run(new Float32Array(n)); console.log('ran twice')`, threads)
    t.equal(idle.status, 0, `child exited cleanly (not killed by the timeout) ${idle.stderr}`)
    t.equal(idle.stdout.trim(), 'ran twice')
  })
}

t.test('a failed run rejects with a coded error and the session takes the next run', async (t) => {
  const r = child(
    `
    const results = []
    s.resize(n * 4, 0) // tensor 1 now lies outside the arena: the run fails on the lane, binding it
    try {
      await run(new Float32Array(n))
      results.push('resolved')
    } catch (e) {
      results.push(e.code + ': ' + e.message)
    }
    s.resize(2 * n * 4, 0)
    const y = new Float32Array(n)
    await run(y)
    results.push(Number.isFinite(y[0]) && y[0] !== 0 ? 'ran' : 'empty')
    console.log(JSON.stringify(results))
    s.dispose()`,
    2,
  )
  t.equal(r.status, 0, `child exited cleanly ${r.stderr}`)
  const results = JSON.parse(r.stdout) as string[]
  t.match(results[0], /^ERR_FLEXPIPE_INVALID_ARGUMENT: .*outside the arena/, `the run rejected (${results[0]})`)
  t.equal(results[1], 'ran', 'and the next run computed its output')
})

t.test('a Worker terminated while its run executes ends cleanly (the run finishes first)', async (t) => {
  // The worker starts a run of ~0.1-1 s and reports; the parent terminates it at once. The
  // environment's cleanup waits for the run's ops before freeing the arrays they write.
  const worker = `
    import { parentPort } from 'node:worker_threads'
    ${prelude}
    run(new Float32Array(n)).then(() => parentPort.postMessage('settled'))
    parentPort.postMessage('started')`
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
      import { Worker } from 'node:worker_threads'
      const w = new Worker(${JSON.stringify(worker)}, { eval: true, env: { ...process.env, THREADS: '2' } })
      w.once('error', (e) => { console.log('error ' + e.message); process.exitCode = 1 })
      const first = await new Promise((resolve) => w.once('message', resolve))
      const code = await w.terminate()
      console.log(first + ', then terminated with code ' + code)`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  )
  t.equal(r.status, 0, `parent exited cleanly ${r.stderr}`)
  t.equal(r.stdout.trim(), 'started, then terminated with code 1', 'the worker started its run and was terminated')
})
