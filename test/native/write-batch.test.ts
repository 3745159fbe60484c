// SPDX-License-Identifier: Apache-2.0
// Session.writeBatch (native/runtime/write_batch.h) puts the same bytes in the arena as prepack() + write()
// do, one job at a time on the JS thread: copies cut into chunks, transforms whole or in parts
// (gemm_pack_b), weights at any byte alignment, on one and two threads. Bad jobs throw before
// anything is written. mapFile (native/addon/map_file.h) gives a file's bytes, privately.
import { readFileSync, writeFileSync } from 'node:fs'
import t from 'tap'
import { binding, type NativeTensor, type WriteBatchJob } from '../../lib/native/binding.js'
import { tempFile } from '../helpers/make-model.js'

const b = binding()

function random(n: number, seed: number): Float32Array {
  let a = seed >>> 0
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0
    out[i] = a / 2 ** 31 - 1
  }
  return out
}

/** The bytes of `data` at byte offset `shift` of a fresh buffer: a view that is not 4-byte aligned unless shift is 0 mod 4. */
function shifted(data: Float32Array, shift: number): Uint8Array {
  const out = new Uint8Array(data.byteLength + shift).subarray(shift)
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  return out
}

interface Transform {
  readonly name: string
  readonly weight: NativeTensor & { data: Float32Array }
  readonly ints: number[]
}

const transforms: Transform[] = [
  // 9.2 MB out: packed in parts on two threads
  { name: 'gemm_pack_b', weight: { dtype: 1, dims: [512, 4500], data: random(512 * 4500, 1) }, ints: [0] },
  { name: 'gemm_pack_b', weight: { dtype: 1, dims: [4500, 512], data: random(512 * 4500, 2) }, ints: [1] },
  { name: 'gemm_pack_b', weight: { dtype: 1, dims: [512, 4500], data: random(512 * 4500, 3) }, ints: [0, 101, 4003] },
  { name: 'gemm_pack_b', weight: { dtype: 1, dims: [37, 29], data: random(37 * 29, 4) }, ints: [0] },
  { name: 'winograd_f63_filter', weight: { dtype: 1, dims: [64, 32, 3, 3], data: random(64 * 32 * 9, 5) }, ints: [] },
  { name: 'grouped_filter', weight: { dtype: 1, dims: [48, 16, 3, 3], data: random(48 * 16 * 9, 6) }, ints: [3] },
  { name: 'conv_narrow_filter', weight: { dtype: 1, dims: [24, 8, 5, 5], data: random(24 * 8 * 25, 7) }, ints: [] },
]

function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

for (const threads of [1, 2]) {
  t.test(`writeBatch writes what prepack() and write() write (${threads} thread${threads > 1 ? 's' : ''})`, async (t) => {
    const s = new b.Session(threads, 'auto')
    t.teardown(() => s.dispose())
    const expected: Array<{ offset: number; bytes: Uint8Array }> = []
    const jobs: WriteBatchJob[] = []
    let offset = 0
    const place = (bytes: number): number => {
      const at = offset
      offset += Math.ceil((bytes + 1) / 64) * 64
      return at
    }
    // A copy of 10.5 MB (three chunks) from an odd address, and a small one.
    for (const [n, shift] of [[2_625_000, 1], [7, 0]] as const) {
      const data = random(n, 10 + n)
      const at = place(data.byteLength)
      jobs.push({ offset: at, data: shifted(data, shift) })
      expected.push({ offset: at, bytes: bytesOf(data) })
    }
    transforms.forEach((x, i) => {
      const want = b.prepack(x.name, x.weight, x.ints)
      const shape = b.prepackShape(x.name, x.weight, x.ints)
      t.same(shape, { dtype: want.dtype, dims: want.dims }, `${x.name}: prepackShape says what prepack returns`)
      const at = place(want.data.byteLength)
      jobs.push({ offset: at, transform: x.name, ints: x.ints, dtype: 1, dims: x.weight.dims, data: shifted(x.weight.data, i % 4) })
      expected.push({ offset: at, bytes: bytesOf(new Uint8Array(want.data)) })
    })
    s.resize(offset, 0)
    await s.writeBatch(jobs)
    for (const [k, e] of expected.entries()) {
      const back = new Uint8Array(e.bytes.byteLength)
      s.read(e.offset, back)
      t.ok(Buffer.compare(Buffer.from(back), Buffer.from(e.bytes)) === 0, `job ${k}: ${e.bytes.byteLength} bytes identical`)
    }
  })
}

t.test('writeBatch checks every job before it writes any', async (t) => {
  const s = new b.Session(2, 'auto')
  t.teardown(() => s.dispose())
  s.resize(1 << 16, 0)
  const ones = new Uint8Array(256).fill(1)
  const good: WriteBatchJob = { offset: 0, data: ones }
  const w = transforms[3]!
  const transform = (over: Partial<{ transform: string; ints: number[]; dims: number[]; data: ArrayBufferView; offset: number }>): WriteBatchJob => ({
    offset: 1024,
    transform: w.name,
    ints: w.ints,
    dtype: 1,
    dims: w.weight.dims,
    data: w.weight.data,
    ...over,
  })
  t.throws(() => s.writeBatch([good, transform({ transform: 'no_such_transform' })]), RangeError, 'an unknown transform')
  t.throws(() => s.writeBatch([good, transform({ data: new Float32Array(5) })]), RangeError, 'weight bytes that do not fit its dims')
  t.throws(() => s.writeBatch([good, transform({ ints: [0, 10, 40] })]), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' }, 'columns outside the weight')
  t.throws(() => s.writeBatch([good, transform({ offset: (1 << 16) - 64 })]), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' }, 'a result past the arena')
  t.throws(() => s.writeBatch([good, { offset: (1 << 16) - 8, data: ones }]), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' }, 'a copy past the arena')
  t.throws(() => s.writeBatch([good, { offset: -1, data: ones }]), RangeError, 'a negative offset')
  t.throws(() => s.writeBatch([good, { offset: 0, data: 'text' as never }]), TypeError, 'data that is not a typed array')
  t.throws(() => s.writeBatch('jobs' as never), TypeError)
  const back = new Uint8Array(256)
  s.read(0, back)
  t.ok(back.every((x) => x === 0), 'nothing was written')
  await s.writeBatch([good])
  s.read(0, back)
  t.ok(back.every((x) => x === 1), 'a good batch writes (the session is usable after the errors)')
})

t.test('mapFile gives the file bytes, privately', async (t) => {
  const content = bytesOf(random(10_000, 9))
  const path = tempFile('mapped.bin', content)
  const mapped = new Uint8Array(b.mapFile(path))
  t.equal(mapped.byteLength, content.byteLength)
  t.ok(Buffer.compare(Buffer.from(mapped), Buffer.from(content)) === 0, 'same bytes')
  mapped[0] = mapped[0]! ^ 0xff
  t.ok(Buffer.compare(readFileSync(path), Buffer.from(content)) === 0, 'a write to the buffer does not reach the file')
  const empty = tempFile('empty.bin', new Uint8Array(0))
  t.equal(b.mapFile(empty).byteLength, 0)
  writeFileSync(empty, 'x')
  t.equal(b.mapFile(empty).byteLength, 1)
  t.throws(() => b.mapFile('/nonexistent/model.onnx'), { code: 'ERR_FLEXPIPE_IO' })
  t.throws(() => b.mapFile('/tmp'), { code: 'ERR_FLEXPIPE_IO' }, 'a directory')
  t.throws(() => b.mapFile(42 as never), TypeError)
})

t.test('unmapFile releases a mapping now: its views read as empty, other buffers are refused', async (t) => {
  const content = bytesOf(random(70_000, 10))
  const path = tempFile('unmapped.bin', content)
  const buffer = b.mapFile(path)
  const view = new Uint8Array(buffer, 100, 1000)
  t.equal(view[0], content[100], 'mapped bytes before')
  const mappedBefore = readFileSync('/proc/self/maps', 'utf8').includes(path)
  t.ok(mappedBefore, 'the file is in /proc/self/maps')
  t.equal(b.unmapFile(buffer), true, 'released')
  t.equal(buffer.byteLength, 0, 'the ArrayBuffer is detached')
  t.equal(view.length, 0, 'a view of it is empty')
  t.equal(view[0], undefined, 'and reads nothing')
  t.notOk(readFileSync('/proc/self/maps', 'utf8').includes(path), 'the file is no longer mapped')
  t.equal(b.unmapFile(buffer), false, 'a second release does nothing')
  t.throws(() => b.unmapFile(new ArrayBuffer(16)), TypeError, 'an ArrayBuffer mapFile did not make')
  t.throws(() => b.unmapFile(new Uint8Array(4) as never), TypeError)
})
