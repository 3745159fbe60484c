// SPDX-License-Identifier: Apache-2.0
// A session's two lanes: one run (compute) and one readFile (load) overlap; same-lane overlap and
// state changes during either are refused with ERR_FLEXPIPE_BUSY.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { UnaryCode } from '../../lib/model/ops/eltwise-codes.js'
import { binding } from '../../lib/native/binding.js'
import { tempFile } from '../helpers/make-model.js'
import { program, unaryOp } from '../helpers/program.js'

const b = binding()
const F32 = 1
const n = 1 << 20 // floats per activation tensor
const fileBytes = 16 << 20
const activationBase = fileBytes // the load lane writes [0, fileBytes), the compute lane above it

// x -> sin -> exp -> tanh -> sin -> exp -> tanh: six ops over 4 MiB tensors, ping-ponging two slots.
function chain(): Float64Array {
  const tensors = [0, 1, 2].map((i) => [1, i * n * 4, F32, n])
  const fns = [UnaryCode.sin, UnaryCode.exp, UnaryCode.tanh, UnaryCode.sin, UnaryCode.exp, UnaryCode.tanh]
  const ops = fns.map((fn, i) => unaryOp(fn, i === 0 ? 0 : 1 + ((i + 1) % 2), 1 + (i % 2)))
  return program(tensors, ops)
}

function fileData(): Uint8Array {
  const rand = seededRandom(7)
  return Uint8Array.from({ length: fileBytes }, () => Math.floor(rand() * 256))
}

function inputData(): Float32Array {
  const rand = seededRandom(11)
  return Float32Array.from({ length: n }, () => rand() * 4 - 2)
}

// The last op (index 5) writes slot 1 + (5 % 2) = tensor 2.
const outputTensor = 2

// With one thread or several, a run executes on the session's compute lane (native/runtime/lane.h):
// both must overlap a read.
for (const [io, threads] of [['uring', 2], ['pread', 2], ['uring', 1], ['pread', 1]] as const) {
  t.test(`a run (${threads} thread${threads > 1 ? 's' : ''}) and a readFile (${io}) are in flight at once and both resolve correctly`, async (t) => {
    const s = new b.Session(threads, io)
    t.teardown(() => s.dispose())
    s.resize(activationBase + 3 * n * 4, 0)
    const id = s.addProgram(chain())
    const x = inputData()
    const alone = new Float32Array(n)
    await s.run(id, activationBase, [[0, x]], [[outputTensor, alone]])
    const bytes = fileData()
    const path = tempFile('lanes.bin', bytes)
    // 16 MiB at 40 MB/s: the read stays in flight for >= 420 ms.
    const events: string[] = []
    const read = s.readFile(path, new Float64Array([0, fileBytes, 0]), { bandwidth: 40e6 }).then((r) => {
      events.push('read')
      return r
    })
    const y = new Float32Array(n)
    const run = s.run(id, activationBase, [[0, x]], [[outputTensor, y]], true).then((times) => {
      events.push('run')
      return times
    })
    t.same(events, [], 'both promises are pending after both calls returned')
    const times = await run
    t.same(events, ['run'], 'the run resolved while the read was still pending (the lanes overlapped)')
    t.equal(times?.length, 6, 'profile has one time per op')
    t.ok(Buffer.from(y.buffer).equals(Buffer.from(alone.buffer)), 'run output equals the output of a run alone')
    const r = await read
    t.same(events, ['run', 'read'])
    t.equal(r.bytes, fileBytes)
    t.ok(r.ms >= 400, `throttled read took ${r.ms.toFixed(1)} ms`)
    const back = new Uint8Array(fileBytes)
    s.read(0, back)
    t.ok(Buffer.from(back).equals(Buffer.from(bytes)), 'file bytes landed in the arena')
  })
}

t.test('same-lane overlap and state changes during either lane are refused with ERR_FLEXPIPE_BUSY', async (t) => {
  const s = new b.Session(1, 'auto')
  t.teardown(() => s.dispose())
  s.resize(activationBase + 3 * n * 4, 0)
  const id = s.addProgram(chain())
  const path = tempFile('busy.bin', new Uint8Array(1 << 20).fill(3))
  const busy = { code: 'ERR_FLEXPIPE_BUSY' }
  const stateChanges = (what: string): void => {
    t.throws(() => s.resize(1 << 20, 0), busy, `resize during ${what}`)
    t.throws(() => s.write(0, new Uint8Array(4)), busy, `write during ${what}`)
    t.throws(() => s.read(0, new Uint8Array(4)), busy, `read during ${what}`)
    t.throws(() => s.addProgram(chain()), busy, `addProgram during ${what}`)
    t.throws(() => s.removeProgram(id), busy, `removeProgram during ${what}`)
    t.throws(() => s.setThreads(2), busy, `setThreads during ${what}`)
    t.throws(() => s.dispose(), busy, `dispose during ${what}`)
    t.equal(s.stats().arenaBytes, activationBase + 3 * n * 4, `stats() still answers during ${what}`)
  }

  const read = s.readFile(path, new Float64Array([0, 1 << 20, 0]), { bandwidth: 10e6 })
  t.throws(() => s.readFile(path, new Float64Array([0, 16, 0])), busy, 'second readFile while one is in flight')
  stateChanges('a readFile')
  await read

  const run = s.run(id, activationBase, [[0, new Float32Array(n)]], [])
  t.throws(() => s.run(id, activationBase, [], []), busy, 'second run while one is in flight')
  stateChanges('a run')
  await run

  // a refused call does not leave its lane claimed
  const read2 = s.readFile(path, new Float64Array([0, 16, 0]))
  t.throws(() => s.readFile(path, new Float64Array([0, 16, 0])), busy)
  await read2
  await s.run(id, activationBase, [], [])
  // argument errors release the lane they claimed
  t.throws(() => s.run(id, activationBase, 'x' as never, []), TypeError)
  await s.run(id, activationBase, [], [])
  t.throws(() => s.readFile(path, new Float64Array(2)), RangeError)
  await s.readFile(path, new Float64Array([0, 16, 0]))
  s.resize(1 << 20, 0)
  t.pass('both lanes idle again: resize works')
})
