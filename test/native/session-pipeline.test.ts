// SPDX-License-Identifier: Apache-2.0
// Session.runPipeline (native/runtime/pipeline_gate.h): the load and compute lanes of one run wait on
// each other only at the schedule's edges, and every edge holds. Random schedules over a few weight
// slots: a load fills a slot with a block of the file, an op reads a slot; a slot is loaded again only
// after its last reader (after = that op), as the memory plan's overlap edges demand. If an op ran before
// its load, or a load overwrote a slot before its reader ran, the op's output would hold another block.
import t, { type Test } from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { UnaryCode } from '../../lib/model/ops/eltwise-codes.js'
import { binding, type NativePipelineResult, type NativeSession } from '../../lib/native/binding.js'
import { pipelineEdges } from '../../lib/plan/budget/pipeline-edges.js'
import { tempFile } from '../helpers/make-model.js'
import { opCode, program, unaryOp } from '../helpers/program.js'

const b = binding()
const F32 = 1
const I64 = 7
const floats = 1 << 18 // per block and slot: 1 MiB
const blockBytes = floats * 4
const slots = 3
const blocks = 24
const activationBase = slots * blockBytes

const rand0 = seededRandom(4242)
const fileFloats = Float32Array.from({ length: blocks * floats }, () => rand0() * 2 - 1)
const path = tempFile('pipeline.bin', new Uint8Array(fileFloats.buffer))
const block = (j: number): Float32Array => fileFloats.subarray(j * floats, (j + 1) * floats)

interface Case {
  /** Per load: the slot it fills (load j reads file block j). */
  readonly loadSlot: number[]
  readonly after: number[]
  /** Per op: the slot it reads and the block the slot must hold then. */
  readonly opSlot: number[]
  readonly expect: number[]
  readonly need: number[]
}

/** A valid schedule: a slot is reloaded only after its last reader; every op reads a loaded slot. */
function randomCase(seed: number): Case {
  const rand = seededRandom(seed)
  const ops = 4 + Math.floor(rand() * 8)
  const loadSlot: number[] = []
  const after: number[] = []
  const opSlot: number[] = []
  const expect: number[] = []
  const need: number[] = []
  const lastReader = new Array<number>(slots).fill(-1)
  const holds = new Array<number>(slots).fill(-1) // block in the slot, -1: none
  const fresh = new Array<boolean>(slots).fill(false) // loaded and not read since (may not be reloaded)
  for (let k = 0; k < ops; k++) {
    const issue = Math.floor(rand() * 3)
    for (let r = 0; r < issue && loadSlot.length < blocks; r++) {
      const free = [...Array(slots).keys()].filter((s) => !fresh[s])
      if (free.length === 0) break
      const s = free[Math.floor(rand() * free.length)]!
      after.push(lastReader[s]!)
      holds[s] = loadSlot.length
      loadSlot.push(s)
      fresh[s] = true
    }
    const loaded = [...Array(slots).keys()].filter((s) => holds[s]! >= 0)
    if (loaded.length === 0) {
      const s = 0
      after.push(lastReader[s]!)
      holds[s] = loadSlot.length
      loadSlot.push(s)
      loaded.push(s)
    }
    const s = loaded[Math.floor(rand() * loaded.length)]!
    opSlot.push(s)
    expect.push(holds[s]!)
    lastReader[s] = k
    fresh[s] = false
    need.push(loadSlot.length)
  }
  return { loadSlot, after, opSlot, expect, need }
}

function caseProgram(c: Case): Float64Array {
  const tensors = [
    ...Array.from({ length: slots }, (_, s) => [0, s * blockBytes, F32, floats]),
    ...c.opSlot.map((_, k) => [1, k * blockBytes, F32, floats]),
  ]
  return program(tensors, c.opSlot.map((s, k) => unaryOp(UnaryCode.neg, s, slots + k)))
}

function ranges(c: Case): Float64Array {
  return new Float64Array(c.loadSlot.flatMap((s, j) => [j * blockBytes, blockBytes, s * blockBytes]))
}

function newSession(threads: number, io: 'uring' | 'pread' | 'auto', ops: number): NativeSession {
  const s = new b.Session(threads, io)
  s.resize(activationBase + ops * blockBytes, 0)
  return s
}

/** A session with case `seed`'s program added (disposed when t ends). */
function caseSession(t: Test, seed: number, threads: number): { c: Case; s: NativeSession; id: number } {
  const c = randomCase(seed)
  const s = newSession(threads, 'auto', c.opSlot.length)
  t.teardown(() => s.dispose())
  return { c, s, id: s.addProgram(caseProgram(c)) }
}

/**
 * The run's timeline against its schedule: every load has an end time and every op, when profiled, a
 * start after the loads it needs were in and an end before the next op starts; a load that waits for
 * an op ends after that op did. Without profiling there are no op times.
 */
function checkTimeline(t: Test, c: Case, r: NativePipelineResult, profiled: boolean, what: string): void {
  t.equal(r.loadEndMs.length, c.loadSlot.length, `${what}: one end time per load`)
  if (!profiled) {
    t.equal(r.opStartMs, undefined, `${what}: no op times without profiling`)
    return
  }
  const start = r.opStartMs!
  const end = r.opEndMs!
  const late: string[] = []
  c.need.forEach((n, k) => {
    for (let j = 0; j < n; j++) if (start[k]! < r.loadEndMs[j]!) late.push(`op ${k} started at ${start[k]} before load ${j} ended at ${r.loadEndMs[j]}`)
    if (end[k]! < start[k]! || (k > 0 && start[k]! < end[k - 1]!)) late.push(`op ${k} [${start[k]}, ${end[k]}] overlaps its neighbours`)
  })
  c.after.forEach((a, j) => {
    if (a >= 0 && r.loadEndMs[j]! < end[a]!) late.push(`load ${j} ended at ${r.loadEndMs[j]} before op ${a} it waits for ended at ${end[a]}`)
  })
  t.same(late, [], `${what}: the timeline keeps every edge of the schedule`)
}

for (const [io, threads] of [['uring', 2], ['pread', 2], ['uring', 1], ['pread', 1]] as const) {
  t.test(`random schedules (${io}, ${threads} thread${threads > 1 ? 's' : ''}): every op reads the block its schedule says`, async (t) => {
    for (let seed = 1; seed <= 6; seed++) {
      const c = randomCase(seed * 31 + threads)
      const s = newSession(threads, io, c.opSlot.length)
      try {
        const id = s.addProgram(caseProgram(c))
        const outs = c.opSlot.map(() => new Float32Array(floats))
        // Loads throttled to about an op's time (odd seeds) or unthrottled: both lanes get ahead in turn.
        const options = seed % 2 === 1 ? { direct: true, bandwidth: 400e6 } : { direct: true }
        const profile = seed % 3 !== 0
        const r = await s.runPipeline(id, activationBase, [], outs.map((o, k) => [slots + k, o]), profile, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need), options)
        t.equal(r.bytes, c.loadSlot.length * blockBytes, `seed ${seed}: every load read`)
        const wrong = outs.map((o, k) => (o.every((v, i) => v === -block(c.expect[k]!)[i]!) ? -1 : k)).filter((k) => k >= 0)
        t.same(wrong, [], `seed ${seed}: ${c.opSlot.length} ops over ${c.loadSlot.length} loads, none read another block`)
        checkTimeline(t, c, r, profile, `seed ${seed}`)
      } finally {
        s.dispose()
      }
    }
  })
}

t.test('a throttled pipeline delivers each load no sooner than the emulated device would', async (t) => {
  const { c, s, id } = caseSession(t, 5, 2)
  const bandwidth = 100e6
  const t0 = performance.now()
  const r = await s.runPipeline(id, activationBase, [], [], true, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need), { bandwidth })
  const ms = performance.now() - t0
  const floor = ((c.loadSlot.length * blockBytes) / bandwidth) * 1e3
  t.ok(ms >= floor * 0.99, `${ms.toFixed(1)} ms >= ${floor.toFixed(1)} ms for ${c.loadSlot.length} MiB at 100 MB/s`)
  t.ok(r.computeWaitMs > 0, `the ops waited for the throttled loads (${r.computeWaitMs.toFixed(1)} ms)`)
  t.equal(r.ops?.length, c.opSlot.length, 'profiled: one time per op')
})

t.test('a load that fails rejects the run with its IO error; the ops waiting for it stop', async (t) => {
  const { c, s, id } = caseSession(t, 3, 2)
  const bad = ranges(c)
  bad[3 * (c.loadSlot.length - 1)] = blocks * blockBytes // the last load starts at the end of the file
  await t.rejects(
    s.runPipeline(id, activationBase, [], [], false, path, bad, Int32Array.from(c.after), Int32Array.from(c.need)),
    { code: 'ERR_FLEXPIPE_IO', message: /end of file/ },
  )
  const gone = tempFile('gone.bin', new Uint8Array(16))
  const { rmSync } = await import('node:fs')
  rmSync(gone)
  await t.rejects(s.runPipeline(id, activationBase, [], [], false, gone, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need)), { code: 'ERR_FLEXPIPE_IO', message: /ENOENT/ })
  const r = await s.runPipeline(id, activationBase, [], [], false, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need))
  t.equal(r.bytes, c.loadSlot.length * blockBytes, 'both lanes are free again and the next run succeeds')
})

t.test('an op that fails rejects the run with its error; loads waiting for later ops stop', async (t) => {
  // op 0 gathers from slot 0 with the int64 indices load 0 put in slot 1; load 1 refills slot 0 after
  // op 1, which never runs. Valid indices: both ops run; out-of-range ones: op 0 fails.
  const idx = new BigInt64Array(blockBytes / 8)
  const badIdx = new BigInt64Array(blockBytes / 8).fill(1n << 40n)
  const file = tempFile('gather.bin', new Uint8Array([...new Uint8Array(badIdx.buffer), ...new Uint8Array(idx.buffer), ...new Uint8Array(blockBytes)]))
  const tensors = [
    [0, 0, F32, floats],
    [0, blockBytes, I64, blockBytes / 8],
    [1, 0, F32, blockBytes / 8],
    [1, blockBytes, F32, floats],
  ]
  const gather = [opCode('Gather'), 2, 1, 1, 0, 0, 1, 2, 0]
  const ops = [gather, unaryOp(UnaryCode.neg, 0, 3)]
  const s = new b.Session(2, 'auto')
  t.teardown(() => s.dispose())
  s.resize(2 * blockBytes + 2 * blockBytes, 0)
  const id = s.addProgram(program(tensors, ops))
  const after = Int32Array.from([-1, 1])
  const need = Int32Array.from([1, 1])
  const gathered = new Float32Array(blockBytes / 8).fill(NaN)
  const pipelineFrom = (first: number) =>
    s.runPipeline(id, 2 * blockBytes, [], [[2, gathered]], false, file, new Float64Array([first, blockBytes, blockBytes, 2 * blockBytes, blockBytes, 0]), after, need)
  await t.rejects(pipelineFrom(0), { message: /op 0 \(Gather\): .*index out of range/ })
  const r = await pipelineFrom(blockBytes)
  t.equal(r.bytes, 2 * blockBytes, 'with valid indices the same schedule runs (the lanes were released): both loads read')
  t.ok(gathered.every((v) => v === 0), 'and Gather read index 0 of the zero-filled slot')
})

t.test('schedules that are malformed or could deadlock are refused before anything runs', async (t) => {
  const { c, s, id } = caseSession(t, 2, 1)
  const run = (after: Int32Array, need: Int32Array, r = ranges(c)): Promise<unknown> => s.runPipeline(id, activationBase, [], [], false, path, r, after, need)
  const after = Int32Array.from(c.after)
  const need = Int32Array.from(c.need)
  t.throws(() => run(after.subarray(1), need), { name: 'RangeError', message: /after: expected one entry per range/ })
  t.throws(() => run(after, need.subarray(1)), { name: 'RangeError', message: /need: expected one entry per op/ })
  t.throws(() => run(Float64Array.from(after) as never, need), { name: 'TypeError', message: /after: expected an Int32Array/ })
  const over = Int32Array.from(need)
  over[0] = c.loadSlot.length + 1
  t.throws(() => run(after, over), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /need\[0\]/ })
  const falling = Int32Array.from(need)
  falling[falling.length - 1] = 0
  t.throws(() => run(after, falling), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /must lie in/ })
  const lost = Int32Array.from(after)
  lost[0] = c.opSlot.length
  t.throws(() => run(lost, need), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /after\[0\]/ })
  // load 0 waits for the last op, which needs every load: a cycle
  const cycle = Int32Array.from(after)
  cycle[0] = c.opSlot.length - 1
  t.throws(() => run(cycle, need), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /load 0 waits for op \d+, which waits for \d+ loads: the schedule would deadlock/ })
  t.throws(() => pipelineEdges({ ops: 2, loads: [{ step: 1, after: 0 }, { step: 0, after: -1 }] }), /load 0 waits for op 0, which needs 2 loads/, 'pipelineEdges refuses it in TypeScript too')
  const r = (await run(after, need)) as { bytes: number }
  t.equal(r.bytes, c.loadSlot.length * blockBytes, 'after every refusal both lanes were free: the valid schedule runs')
})

t.test('runPipeline takes both lanes: other long calls and state changes wait for it', async (t) => {
  const { c, s, id } = caseSession(t, 4, 2)
  const busy = { code: 'ERR_FLEXPIPE_BUSY' }
  const p = s.runPipeline(id, activationBase, [], [], false, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need), { bandwidth: 50e6 })
  t.throws(() => s.run(id, activationBase, [], []), busy, 'run during runPipeline')
  t.throws(() => s.readFile(path, new Float64Array([0, 16, 0])), busy, 'readFile during runPipeline')
  t.throws(() => s.runPipeline(id, activationBase, [], [], false, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need)), busy, 'a second runPipeline')
  t.throws(() => s.resize(1 << 20, 0), busy, 'resize during runPipeline')
  await p
  const read = s.readFile(path, new Float64Array([0, blockBytes, 0]), { bandwidth: 20e6 })
  t.throws(() => s.runPipeline(id, activationBase, [], [], false, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need)), busy, 'runPipeline during a readFile')
  await read
  const run = s.run(id, activationBase, [], [])
  t.throws(() => s.runPipeline(id, activationBase, [], [], false, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need)), busy, 'runPipeline during a run')
  await run
  const r = await s.runPipeline(id, activationBase, [], [], false, path, ranges(c), Int32Array.from(c.after), Int32Array.from(c.need))
  t.equal(r.bytes, c.loadSlot.length * blockBytes, 'both lanes free again: a runPipeline runs')
})
