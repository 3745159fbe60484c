// SPDX-License-Identifier: Apache-2.0
// The native Session contract: bounds checks, program validation, busy/disposed, file reads on both readers.
import { writeFileSync } from 'node:fs'
import t from 'tap'
import { binding } from '../../lib/native/binding.js'
import { tempFile } from '../helpers/make-model.js'

const b = binding()

function program(tensors: number[][], ops: number[][]): Float64Array {
  const words = [1, tensors.length, ops.length]
  for (const [region, offset, dtype, ...dims] of tensors) {
    words.push(region!, offset!, dtype!, dims.length, ...dims, ...new Array(8 - dims.length).fill(0))
  }
  for (const op of ops) words.push(...op)
  return new Float64Array(words)
}

const code = (name: string): number => b.opNames().indexOf(name)

t.test('info() describes the build', async (t) => {
  const info = b.info()
  t.match(info, { arch: /x64|arm64/, isa: /^(ref|avx2|avx512|neon)$/, openmp: true })
  t.ok(b.opNames().length > 20, 'has an operator table')
})

t.test('arena writes and reads are bounds-checked', async (t) => {
  const s = new b.Session(1, 'auto')
  s.resize(4096, 0)
  s.write(4000, new Uint8Array(96))
  t.throws(() => s.write(4001, new Uint8Array(96)), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  t.throws(() => s.read(2 ** 40, new Uint8Array(1)), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  t.throws(() => s.write(-1, new Uint8Array(1)), RangeError)
  t.throws(() => s.write(0, 'text' as never), TypeError)
  const src = new Float32Array([1, 2, 3, 4])
  s.write(64, src)
  s.resize(8192, 128) // grows, keeping the first 128 bytes
  const back = new Float32Array(4)
  s.read(64, back)
  t.same(Array.from(back), [1, 2, 3, 4])
  s.dispose()
})

t.test('programs are validated before they run', async (t) => {
  const s = new b.Session(1, 'auto')
  s.resize(1024, 0)
  const relu = code('Unary')
  t.ok(relu >= 0)
  t.throws(() => s.addProgram(new Float64Array([2, 0, 0])), { message: /version/ })
  t.throws(() => s.addProgram(new Float64Array([1, 5, 0])), { message: /truncated/ })
  t.throws(() => s.addProgram(program([[0, 0, 99, 4]], [])), { message: /dtype/ })
  t.throws(() => s.addProgram(program([[0, 0, 1, 4]], [[9999, 1, 1, 0, 0, 0, 0]])), { message: /op code/ })
  t.throws(() => s.addProgram(program([[0, 0, 1, 4]], [[relu, 1, 1, 0, 0, 0, 7]])), { message: /tensor id/ })
  t.throws(() => s.addProgram(new Float64Array([1, 0, 0, 5])), { message: /trailing/ })
  t.throws(() => s.addProgram(new Float32Array(3) as never), TypeError)
  // a tensor outside the arena is caught when the program binds, not by a crash
  const id = s.addProgram(program([[1, 0, 1, 4], [1, 1 << 20, 1, 4]], []))
  await t.rejects(s.run(id, 0, [], []), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /outside the arena/ })
  // host buffers must match tensor sizes
  await t.rejects(Promise.resolve().then(() => s.run(id, 0, [[0, new Float32Array(3)]], [])), { message: /bytes/ })
  s.dispose()
})

t.test("a program added after one was removed decodes into the removed one's storage and is wholly its own", async (t) => {
  const s = new b.Session(1, 'auto')
  t.teardown(() => s.dispose())
  s.resize(1 << 16, 0)
  const { UnaryCode } = await import('../../lib/model/ops/eltwise-codes.js')
  const { unaryOp } = await import('../helpers/program.js')
  // big: 6 tensors of 1000 floats, a chain of 5 ops; small: 2 tensors of 7 floats, one op
  const big = program(Array.from({ length: 6 }, (_, i) => [1, i * 4096, 1, 1000]), Array.from({ length: 5 }, (_, i) => unaryOp(UnaryCode.neg, i, i + 1)))
  const small = program([[1, 0, 1, 7], [1, 64, 1, 7]], [unaryOp(UnaryCode.exp, 0, 1)])
  const first = s.addProgram(big)
  const x = Float32Array.from({ length: 1000 }, (_, i) => i / 100)
  const y = new Float32Array(1000)
  await s.run(first, 0, [[0, x]], [[5, y]])
  t.equal(y[3], -x[3]!, 'the big program runs: five negations')
  s.removeProgram(first)
  t.throws(() => s.addProgram(new Float64Array([1, 5, 0])), { message: /truncated/ }, 'a descriptor that fails to decode into the spare storage')
  const second = s.addProgram(small)
  const z = new Float32Array(7)
  await t.rejects(Promise.resolve().then(() => s.run(second, 0, [[0, x.subarray(0, 7)]], [[1, z]], false, 0, 5)), { message: /opEnd <= 1 \(ops of program/ }, "the new program has its own op count (1), not the removed one's (5)")
  await s.run(second, 0, [[0, x.subarray(0, 7)]], [[1, z]])
  t.same(Array.from(z), Array.from(x.subarray(0, 7), (v) => Math.fround(Math.exp(v))), 'and computes its own op on its own sizes')
  await t.rejects(Promise.resolve().then(() => s.run(second, 0, [[0, x]], [[5, y]])), { message: /no tensor 5|bytes/ }, "the removed program's tensors are gone")
  const third = s.addProgram(big)
  await s.run(third, 0, [[0, x]], [[5, y]])
  t.equal(y[999], -x[999]!, 'the big program decodes again into the small one\'s storage (grown) and runs')
})

t.test('a program whose op reads a tensor partially overlapping its output, or a misaligned tensor, is refused at bind (found by native/fuzz/program_fuzz.cc)', async (t) => {
  const s = new b.Session(1, 'auto')
  t.teardown(() => s.dispose())
  s.resize(4096, 0)
  const { UnaryCode } = await import('../../lib/model/ops/eltwise-codes.js')
  const { unaryOp } = await import('../helpers/program.js')
  // output [8, +16) over input [0, +16): they share bytes 8..16 without being the same tensor
  const partial = s.addProgram(program([[1, 0, 1, 4], [1, 8, 1, 4]], [unaryOp(UnaryCode.neg, 0, 1)]))
  await t.rejects(s.run(partial, 0, [], []), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /op 0's input 0 partially overlaps its output 0/ })
  const inPlace = s.addProgram(program([[1, 0, 1, 4]], [unaryOp(UnaryCode.neg, 0, 0)]))
  const negated = new Float32Array(4)
  await s.run(inPlace, 0, [[0, Float32Array.from([1, 2, 3, 4])]], [[0, negated]])
  t.same(Array.from(negated), [-1, -2, -3, -4], 'in place (the same first byte) runs')
  const misaligned = s.addProgram(program([[1, 2, 1, 4], [1, 64, 1, 4]], [unaryOp(UnaryCode.neg, 0, 1)]))
  await t.rejects(s.run(misaligned, 0, [], []), { message: /tensor 0 \(float32\) starts at an address that is not a multiple of its element size/ })
  const aligned = s.addProgram(program([[1, 4, 1, 4], [1, 64, 1, 4]], [unaryOp(UnaryCode.neg, 0, 1)]))
  await t.rejects(s.run(aligned, 2, [], []), { message: /not a multiple of its element size/ }, 'an activation base that misaligns it too')
  const y = new Float32Array(4)
  await s.run(aligned, 0, [[0, Float32Array.from([5, 6, 7, 8])]], [[1, y]])
  t.same(Array.from(y), [-5, -6, -7, -8], 'the same program at an aligned base runs')
})

t.test('an op whose outputs are all empty is not run, however large the dims of its empty tensors (found by program_fuzz)', async (t) => {
  const s = new b.Session(1, 'auto')
  t.teardown(() => s.dispose())
  s.resize(4096, 0)
  const rows = 2 ** 40 // LayerNorm would loop over 2^40 empty rows
  const layerNorm = code('LayerNormalization')
  const id = s.addProgram(program([[1, 0, 1, rows, 0], [1, 64, 1, 1], [1, 128, 1, rows, 0]], [[layerNorm, 2, 1, 1, 1, 0, 1, 2, 1, 1e-5]]))
  await t.resolves(s.run(id, 0, [], []), 'resolves without looping over the empty rows (a loop of 2^40 would outlast the test timeout)')
  const { UnaryCode } = await import('../../lib/model/ops/eltwise-codes.js')
  const { unaryOp } = await import('../helpers/program.js')
  const one = s.addProgram(program([[1, 0, 1, 1], [1, 64, 1, 1]], [unaryOp(UnaryCode.neg, 0, 1)]))
  const y = new Float32Array(1)
  await s.run(one, 0, [[0, Float32Array.from([3])]], [[1, y]])
  t.equal(y[0], -3, 'an op with an output to write still runs')
})

t.test('one long operation at a time; dispose is idempotent and final', async (t) => {
  const s = new b.Session(1, 'auto')
  s.resize(1 << 20, 0)
  const path = tempFile('data.bin', new Uint8Array(1 << 20).fill(7))
  const first = s.readFile(path, new Float64Array([0, 1 << 20, 0]))
  t.throws(() => s.readFile(path, new Float64Array([0, 16, 0])), { code: 'ERR_FLEXPIPE_BUSY' })
  t.throws(() => s.dispose(), { code: 'ERR_FLEXPIPE_BUSY' })
  await first
  s.dispose()
  s.dispose()
  t.throws(() => s.resize(10, 0), { code: 'ERR_FLEXPIPE_DISPOSED' })
  t.throws(() => s.stats(), { code: 'ERR_FLEXPIPE_DISPOSED' })
})

for (const io of ['uring', 'pread'] as const) {
  t.test(`readFile through ${io} reads exact bytes and reports IO errors`, async (t) => {
    const s = new b.Session(2, io)
    if (io === 'uring' && !s.stats().reader.startsWith('io_uring')) {
      t.comment(`io_uring unavailable here: ${s.stats().reader}`)
    }
    if (io === 'pread') t.match(s.stats().reader, /^pread/)
    const size = 3 * (1 << 20) + 12345 // several chunks and a ragged tail
    const bytes = new Uint8Array(size)
    for (let i = 0; i < size; i++) bytes[i] = (i * 2654435761) >>> 24
    const path = tempFile('blob.bin', bytes)
    s.resize(size + 8192, 0)
    await s.readFile(path, new Float64Array([100, size - 100, 4096, 0, 50, 0]))
    const back = new Uint8Array(size - 100)
    s.read(4096, back)
    t.same(Buffer.from(back).equals(Buffer.from(bytes.subarray(100))), true, 'range 1 bytes equal')
    const head = new Uint8Array(50)
    s.read(0, head)
    t.same(Array.from(head), Array.from(bytes.subarray(0, 50)), 'range 2 bytes equal')
    await t.rejects(s.readFile(path, new Float64Array([size - 10, 20, 0])), { code: 'ERR_FLEXPIPE_IO', message: /past its end/ })
    await t.rejects(s.readFile('/nonexistent/file.bin', new Float64Array([0, 1, 0])), { code: 'ERR_FLEXPIPE_IO', message: /No such file/ })
    await t.rejects(Promise.resolve().then(() => s.readFile(path, new Float64Array([0, 10, size + 8192]))), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
    writeFileSync(path, bytes.subarray(0, 10)) // shrunk underneath
    await t.rejects(s.readFile(path, new Float64Array([0, 1000, 0])), { code: 'ERR_FLEXPIPE_IO' })
    s.dispose()
  })
}

t.test('runOp checks its arguments', async (t) => {
  t.throws(() => b.runOp('NoSuchOp', [], [], [], []), RangeError)
  t.throws(() => b.runOp('Unary', [{ dtype: 1, dims: [4], data: new Float32Array(3) }], [], [], []), RangeError)
})
