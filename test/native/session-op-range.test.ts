// SPDX-License-Identifier: Apache-2.0
// Op ranges: run(program, base, inputs, outputs, profile, opBegin, opEnd) runs ops [opBegin, opEnd) only.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { BinaryCode, UnaryCode } from '../../lib/model/ops/eltwise-codes.js'
import { binding } from '../../lib/native/binding.js'
import { binaryOp, program, unaryOp } from '../helpers/program.js'

const b = binding()
const F32 = 1
const n = 4099

// t0 input; t1 = sin t0; t2 = exp t1; t3 = t2 * t0; t4 = tanh t3; t5 = t4 - t1; t6 = neg t5.
// Later ops read tensors written by early ones, so a range split must keep the activation region.
const ops = [
  unaryOp(UnaryCode.sin, 0, 1),
  unaryOp(UnaryCode.exp, 1, 2),
  binaryOp(BinaryCode.mul, 2, 0, 3),
  unaryOp(UnaryCode.tanh, 3, 4),
  binaryOp(BinaryCode.sub, 4, 1, 5),
  unaryOp(UnaryCode.neg, 5, 6),
]
const desc = program(
  Array.from({ length: 7 }, (_, i) => [1, i * 16448, F32, n]),
  ops,
)

function setup(): { s: InstanceType<ReturnType<typeof binding>['Session']>; id: number; x: Float32Array } {
  const s = new b.Session(2, 'auto')
  s.resize(4096 + 7 * 16448, 0)
  const rand = seededRandom(5)
  return { s, id: s.addProgram(desc), x: Float32Array.from({ length: n }, () => rand() * 2 - 1) }
}

t.test('running [0, k) then [k, n) gives the same outputs as one run, for every k', async (t) => {
  const { s, id, x } = setup()
  t.teardown(() => s.dispose())
  const whole = new Float32Array(n)
  await s.run(id, 4096, [[0, x]], [[6, whole]])
  for (let k = 0; k <= ops.length; k++) {
    s.write(4096 + 6 * 16448, new Float32Array(n).fill(Number.NaN)) // stale output from the last run
    const y = new Float32Array(n)
    const first = await s.run(id, 4096, [[0, x]], [], true, 0, k)
    const second = await s.run(id, 4096, [], [[6, y]], true, k, ops.length)
    t.equal(first?.length, k, `profile of [0, ${k}) has ${k} entries`)
    t.equal(second?.length, ops.length - k, `profile of [${k}, ${ops.length}) has ${ops.length - k} entries`)
    t.ok(Buffer.from(y.buffer).equals(Buffer.from(whole.buffer)), `split at ${k} equals the whole run`)
  }
  // three ranges, outputs read after each: the middle tensor is already final after op 2
  const mid = new Float32Array(n)
  await s.run(id, 4096, [[0, x]], [], false, 0, 2)
  await s.run(id, 4096, [], [[3, mid]], false, 2, 3)
  const y = new Float32Array(n)
  await s.run(id, 4096, [], [[6, y]], false, 3)
  t.ok(Buffer.from(y.buffer).equals(Buffer.from(whole.buffer)), '[0,2) [2,3) [3,6) equals the whole run')
  const want3 = new Float32Array(n)
  await s.run(id, 4096, [[0, x]], [[3, want3]])
  t.ok(Buffer.from(mid.buffer).equals(Buffer.from(want3.buffer)), 'an output copied out after [2, 3) is op 2\'s result')
})

t.test('a range runs only its ops', async (t) => {
  const { s, id, x } = setup()
  t.teardown(() => s.dispose())
  const sentinel = new Float32Array(n).fill(42)
  s.write(4096 + 6 * 16448, sentinel)
  const got = new Float32Array(n)
  await s.run(id, 4096, [[0, x]], [[6, got]], false, 0, 5)
  t.ok(got.every((v) => v === 42), 'op 5 did not run, so its output is untouched')
  await s.run(id, 4096, [], [[6, got]], false, 5, 6)
  t.ok(got.every((v, i) => Math.abs(v - -(Math.tanh(Math.exp(Math.sin(x[i]!)) * x[i]!) - Math.sin(x[i]!))) < 1e-5), 'op 5 ran')
  const empty = await s.run(id, 4096, [], [], true, 3, 3)
  t.equal(empty?.length, 0, 'an empty range runs nothing and profiles nothing')
})

t.test('op ranges outside 0 <= opBegin <= opEnd <= op count are RangeErrors naming the bounds', async (t) => {
  const { s, id } = setup()
  t.teardown(() => s.dispose())
  const bounds = /0 <= opBegin <= opEnd <= 6/
  t.throws(() => s.run(id, 4096, [], [], false, 4, 2), { name: 'RangeError', message: bounds })
  t.throws(() => s.run(id, 4096, [], [], false, 0, 7), { name: 'RangeError', message: bounds })
  t.throws(() => s.run(id, 4096, [], [], false, -1, 2), { name: 'RangeError', message: bounds })
  t.throws(() => s.run(id, 4096, [], [], false, 7), { name: 'RangeError', message: /got opBegin=7, opEnd=6/ })
  t.throws(() => s.run(id, 4096, [], [], false, 1.5, 2), RangeError)
  t.throws(() => s.run(id, 4096, [], [], false, '1' as never, 2), TypeError)
  t.throws(() => s.run(id, 4096, [], [], 1 as never), TypeError)
  await s.run(id, 4096, [], [], undefined, 1, 2)
  t.pass('the lane is free again after the refused calls')
})
