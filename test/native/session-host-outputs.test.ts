// SPDX-License-Identifier: Apache-2.0
// Outputs written in place (native/runtime/program.h, region 2 + k): the ops write tensors of region
// 2 + k straight into the run's output buffer k, which therefore must be given, at position k, and
// large enough; the other outputs are still copied out of the arena.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { UnaryCode } from '../../lib/model/ops/eltwise-codes.js'
import { binding } from '../../lib/native/binding.js'
import { program, unaryOp } from '../helpers/program.js'

const b = binding()
const F32 = 1
const n = 1031
const bytes = n * 4

// t0 input (arena); t1 = sin t0 into output buffer 0; t2 = exp t1 (arena); t3 = neg t2 into output
// buffer 1; t4 = tanh t1 (arena, copied out as output 2).
const desc = program(
  [[1, 0, F32, n], [2, 0, F32, n], [1, 4224, F32, n], [3, 0, F32, n], [1, 8448, F32, n]],
  [unaryOp(UnaryCode.sin, 0, 1), unaryOp(UnaryCode.exp, 1, 2), unaryOp(UnaryCode.neg, 2, 3), unaryOp(UnaryCode.tanh, 1, 4)],
)

function setup() {
  const s = new b.Session(2, 'auto')
  s.resize(4096 + 3 * 4224, 0)
  const rand = seededRandom(9)
  return { s, id: s.addProgram(desc), x: Float32Array.from({ length: n }, () => rand() * 4 - 2) }
}

t.test('tensors of region 2 + k are written into output buffer k, the others copied out', async (t) => {
  const { s, id, x } = setup()
  t.teardown(() => s.dispose())
  const y1 = new Float32Array(n).fill(Number.NaN)
  const y3 = new Float32Array(n).fill(Number.NaN)
  const y4 = new Float32Array(n).fill(Number.NaN)
  await s.run(id, 4096, [[0, x]], [[1, y1], [3, y3], [4, y4]])
  let worst = 0
  for (let i = 0; i < n; i++) {
    const v = Math.fround(x[i]!)
    worst = Math.max(worst, Math.abs(y1[i]! - Math.sin(v)), Math.abs(y3[i]! + Math.exp(Math.sin(v))), Math.abs(y4[i]! - Math.tanh(Math.sin(v))))
  }
  t.ok(worst < 1e-5, `sin, -exp(sin) and tanh(sin) within 1e-5 of float64 (max |diff| ${worst})`)
  const arena = new Float32Array(1)
  s.read(4096 + 4224, arena)
  t.ok(Math.abs(arena[0]! - Math.exp(Math.sin(Math.fround(x[0]!)))) < 1e-5, 't2 (exp of the in-place t1) sits in the arena at its offset')
  const again = new Float32Array(n)
  await s.run(id, 4096, [[0, x]], [[1, again], [3, new Float32Array(n)], [4, new Float32Array(n)]])
  t.ok(Buffer.from(again.buffer).equals(Buffer.from(y1.buffer)), 'a second run into fresh buffers gives the same output')
})

t.test('a missing, misplaced or short output buffer is an error naming it, and the session stays usable', async (t) => {
  const { s, id, x } = setup()
  t.teardown(() => s.dispose())
  await t.rejects(async () => s.run(id, 4096, [[0, x]], []), { message: /tensor 1 is written into output buffer 0, but the run was given 0 output buffers/ })
  await t.rejects(async () => s.run(id, 4096, [[0, x]], [[1, new Float32Array(n)]]), { message: /written into output buffer 1, but the run was given 1 output buffers/ })
  await t.rejects(async () => s.run(id, 4096, [[0, x]], [[3, new Float32Array(n)], [1, new Float32Array(n)]]), { message: /output 0 \(tensor 3\) is written in place into output buffer 1; pass it at that position/ })
  await t.rejects(async () => s.run(id, 4096, [[0, x]], [[1, new Float32Array(n - 1)], [3, new Float32Array(n)]]), { message: new RegExp(`buffer for tensor 1 has ${bytes - 4} bytes \\(expected ${bytes}\\)`) })
  const y = new Float32Array(n)
  await s.run(id, 4096, [[0, x]], [[1, y], [3, new Float32Array(n)]])
  t.ok(Math.abs(y[5]! - Math.sin(Math.fround(x[5]!))) < 1e-6, 'a correct run after the errors')
})

t.test('a view of an output buffer is bounds-checked; regions past the limit do not decode', async (t) => {
  const s = new b.Session(1, 'auto')
  t.teardown(() => s.dispose())
  s.resize(8192, 0)
  // t1 is the second half of output buffer 0 (offset n/2 floats): it must fit in that buffer
  const half = program([[1, 0, F32, 8], [2, 16, F32, 8]], [unaryOp(UnaryCode.neg, 0, 1)])
  const id = s.addProgram(half)
  const big = new Float32Array(12)
  const whole = program([[1, 0, F32, 8], [2, 16, F32, 8], [2, 0, F32, 12]], [unaryOp(UnaryCode.neg, 0, 1)])
  const id2 = s.addProgram(whole)
  await s.run(id2, 0, [[0, Float32Array.from({ length: 8 }, (_, i) => i + 1)]], [[2, big]])
  t.same(Array.from(big.subarray(4)), [-1, -2, -3, -4, -5, -6, -7, -8], 'the view at byte 16 of the 12-float buffer holds the op\'s output')
  await t.rejects(async () => s.run(id, 0, [[0, new Float32Array(8)]], [[1, new Float32Array(8)]]), { message: /tensor 1 \[16, \+32\) lies outside output buffer 0 \(32 bytes\)/ })
  t.throws(() => s.addProgram(program([[2 + 65536, 0, F32, 1]], [])), { message: /tensor region must be 0 \(persistent\), 1 \(activations\) or 2 \+ an output buffer index/ })
})
