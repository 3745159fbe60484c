// SPDX-License-Identifier: Apache-2.0
// dequant_f32 (kernels/dequant/dequant.h) on every ISA against a TypeScript bit-stream model and against
// ref, bit for bit: bits 2..8, lengths 0..70 and longer ones, odd begin and end offsets, packed bytes
// exactly ceil(end*bits/8) long and misaligned by one byte, centroids with -0 and NaN payloads, and a
// canary on both sides of the output. Runs on arm64 under qemu too (npm run test:arm64): it uses only
// the binding and its `_testing` hook.
import t from 'tap'
import { binding } from '../../lib/native/binding.js'

interface DequantTesting {
  isas(): string[]
  dequant(isa: string, packed: Uint8Array, bits: number, centroids: Float32Array, begin: number, end: number, out: Float32Array): void
}

const testing = binding()._testing as unknown as DequantTesting
const isas = testing.isas()

/** xorshift32 words, seeded, so a failure reproduces from the printed case. */
function words(n: number, seed: number): Uint32Array {
  let s = seed >>> 0 || 1
  const out = new Uint32Array(n)
  for (let i = 0; i < n; i++) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    out[i] = s >>> 0
  }
  return out
}

/** Random packed bytes for `count` weights, as a view starting 1 byte into its buffer (misaligned). */
function packedFor(count: number, bits: number, seed: number): Uint8Array {
  const bytes = Math.ceil((count * bits) / 8)
  const view = new Uint8Array(bytes + 1).subarray(1)
  const w = words(bytes, seed)
  for (let i = 0; i < bytes; i++) view[i] = w[i]! & 0xff
  return view
}

/** 2^bits centroids with distinct bit patterns, including -0 and two NaN payloads. */
function centroidsFor(bits: number, seed: number): Float32Array {
  const c = new Float32Array(1 << bits)
  const u = new Uint32Array(c.buffer)
  const w = words(c.length, seed)
  for (let i = 0; i < c.length; i++) c[i] = (w[i]! / 2 ** 32) * 2 - 1
  u[1] = 0x80000000 // -0
  u[c.length - 1] = 0x7fc01234 // quiet NaN with a payload
  u[2] = 0xffa00001 // signalling-pattern NaN, negative
  return c
}

/** The index of weight i in an LSB-first k-bit stream, read bit by bit. */
function indexAt(packed: Uint8Array, bits: number, i: number): number {
  let v = 0
  for (let b = 0; b < bits; b++) {
    const bit = i * bits + b
    v |= ((packed[bit >> 3]! >> (bit & 7)) & 1) << b
  }
  return v
}

const guard = 8
const canary = 0xdeadbeef

/** Runs the kernel into a guarded output; returns the output bits, or a string on a canary hit. */
function run(isa: string, packed: Uint8Array, bits: number, c: Float32Array, begin: number, end: number): Uint32Array | string {
  const whole = new Float32Array(end - begin + 2 * guard)
  const bitsView = new Uint32Array(whole.buffer)
  bitsView.fill(canary)
  testing.dequant(isa, packed, bits, c, begin, end, whole.subarray(guard, guard + end - begin))
  for (let i = 0; i < guard; i++) {
    if (bitsView[i] !== canary || bitsView[bitsView.length - 1 - i] !== canary) return 'canary overwritten'
  }
  return bitsView.slice(guard, guard + end - begin)
}

const lengths = [...Array.from({ length: 71 }, (_, i) => i), 127, 128, 129, 255, 1000, 4099, 16387]

function* ranges(n: number): Generator<[number, number]> {
  for (const begin of [0, 1, 3, 7, 8, 9, 13, 24]) {
    for (const end of [n, n - 1, n - 7, n - 8, n - 13]) if (begin <= end) yield [begin, end]
  }
}

for (const isa of isas) {
  t.test(`dequant_f32 ${isa} equals the bit-stream model for bits 2..8`, async (t) => {
    let bad = 0
    for (let bits = 2; bits <= 8; bits++) {
      const c = centroidsFor(bits, bits)
      const cbits = new Uint32Array(c.buffer)
      for (const n of lengths) {
        const packed = packedFor(n, bits, 1000 * bits + n)
        for (const [begin, end] of ranges(n)) {
          const got = run(isa, packed, bits, c, begin, end)
          let why = typeof got === 'string' ? got : ''
          for (let i = begin; !why && i < end; i++) {
            const want = cbits[indexAt(packed, bits, i)]!
            if ((got as Uint32Array)[i - begin] !== want) why = `weight ${i}: got 0x${(got as Uint32Array)[i - begin]!.toString(16)}, want 0x${want.toString(16)}`
          }
          if (why && bad++ < 10) t.fail(`${isa} bits=${bits} n=${n} begin=${begin} end=${end}: ${why}`)
        }
      }
    }
    t.equal(bad, 0, 'every case matches')
  })
}

for (const isa of isas.filter((i) => i !== 'ref')) {
  t.test(`dequant_f32 ${isa} equals ref bit for bit on long random streams`, async (t) => {
    for (let bits = 2; bits <= 8; bits++) {
      const n = 100003
      const packed = packedFor(n, bits, 77 + bits)
      const c = centroidsFor(bits, 5 + bits)
      for (const [begin, end] of [[0, n], [5, n - 3], [16384, 2 * 16384], [n - 40, n]] as const) {
        const want = run('ref', packed, bits, c, begin, end)
        const got = run(isa, packed, bits, c, begin, end)
        t.ok(typeof got !== 'string' && typeof want !== 'string' && Buffer.from(got.buffer).equals(Buffer.from(want.buffer)), `bits=${bits} [${begin}, ${end})`)
      }
    }
  })
}

t.test('the dequant hook rejects short buffers and bad bits instead of touching memory', async (t) => {
  const c = new Float32Array(16)
  t.throws(() => testing.dequant('ref', new Uint8Array(4), 4, c, 0, 9, new Float32Array(9)), RangeError, 'packed shorter than ceil(end*bits/8)')
  t.throws(() => testing.dequant('ref', new Uint8Array(8), 4, new Float32Array(8), 0, 9, new Float32Array(9)), RangeError, 'too few centroids')
  t.throws(() => testing.dequant('ref', new Uint8Array(8), 4, c, 0, 9, new Float32Array(8)), RangeError, 'out too short')
  t.throws(() => testing.dequant('ref', new Uint8Array(8), 9, c, 0, 1, new Float32Array(1)), RangeError, 'bits 9')
  t.throws(() => testing.dequant('ref', new Uint8Array(8), 4, c, 5, 4, new Float32Array(1)), RangeError, 'end < begin')
  t.throws(() => testing.dequant('nope', new Uint8Array(8), 4, c, 0, 1, new Float32Array(1)), RangeError, 'unknown isa')
})
