// SPDX-License-Identifier: Apache-2.0
// readFile options and failures: O_DIRECT (and its buffered fallback), the bandwidth throttle, files
// that vanish or shrink, and the read counters of stats(); on both readers.
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding } from '../../lib/native/binding.js'
import { repoRoot } from '../helpers/data.js'

const b = binding()
const page = 4096
const mib = 1 << 20

// On the repo's own file system (dist/ is build output), where O_DIRECT normally works.
const dir = mkdtempSync(join(repoRoot, 'dist', 'read-options-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

function randomBytes(n: number, seed: number): Uint8Array {
  const rand = seededRandom(seed)
  return Uint8Array.from({ length: n }, () => Math.floor(rand() * 256))
}

/** Whether this file system accepts O_DIRECT for path (what readFile should then report). */
function directWorks(path: string): boolean {
  try {
    closeSync(openSync(path, constants.O_RDONLY | constants.O_DIRECT))
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return false
    throw err
  }
}

function arenaBytes(s: InstanceType<ReturnType<typeof binding>['Session']>, offset: number, length: number): Buffer {
  const out = new Uint8Array(length)
  s.read(offset, out)
  return Buffer.from(out)
}

const size = 3 * mib + 3 * page + 123 // ragged tail
const data = randomBytes(size, 1)
const path = join(dir, 'weights.bin')
writeFileSync(path, data)

for (const io of ['uring', 'pread'] as const) {
  t.test(`${io}: an aligned direct read returns the file's bytes and reports whether O_DIRECT was used`, async (t) => {
    const s = new b.Session(2, io)
    t.teardown(() => s.dispose())
    t.comment(`reader: ${s.stats().reader}`)
    s.resize(4 * mib, 0)
    const expectDirect = directWorks(path)
    t.comment(`O_DIRECT on ${dir}: ${expectDirect ? 'accepted' : 'refused (EINVAL)'}`)
    const ranges = [page, 2 * mib + page, 8 * page, 3 * mib + page, page, 0]
    const r = await s.readFile(path, new Float64Array(ranges), { direct: true })
    t.same({ direct: r.direct, bytes: r.bytes }, { direct: expectDirect, bytes: 2 * mib + 2 * page })
    t.ok(r.ms >= 0)
    const file = readFileSync(path)
    t.ok(arenaBytes(s, 8 * page, 2 * mib + page).equals(file.subarray(page, 2 * mib + 2 * page)), 'range 1 bytes equal')
    t.ok(arenaBytes(s, 0, page).equals(file.subarray(3 * mib + page, 3 * mib + 2 * page)), 'range 2 bytes equal')
    t.same(s.stats().directReads, expectDirect ? 1 : 0, 'stats counts the direct read')
    t.equal(s.stats().bytesRead, 2 * mib + 2 * page, 'stats counts the bytes')
    const plain = await s.readFile(path, new Float64Array([0, page, 0]))
    t.equal(plain.direct, false, 'without direct: buffered')
    t.equal(s.stats().bytesRead, 2 * mib + 3 * page)
    t.same(s.stats().directReads, expectDirect ? 1 : 0)
  })

  t.test(`${io}: unaligned offsets, lengths or arena addresses fall back to a buffered read`, async (t) => {
    const s = new b.Session(2, io)
    t.teardown(() => s.dispose())
    s.resize(4 * mib, 0)
    const cases: Array<[string, number[]]> = [
      ['file offset', [100, 2 * page, 0]],
      ['length', [page, 5000, 0]],
      ['arena address', [page, 2 * page, 64]],
      ['one of two ranges', [0, page, 0, page + 1, page, 2 * page]],
    ]
    for (const [what, ranges] of cases) {
      const r = await s.readFile(path, new Float64Array(ranges), { direct: true })
      t.equal(r.direct, false, `unaligned ${what}: direct false`)
      for (let i = 0; i < ranges.length; i += 3) {
        const [off, len, at] = ranges.slice(i, i + 3) as [number, number, number]
        t.ok(arenaBytes(s, at, len).equals(Buffer.from(data.subarray(off, off + len))), `unaligned ${what}: bytes equal`)
      }
    }
    t.equal(s.stats().directReads, 0)
  })

  t.test(`${io}: a file system that refuses O_DIRECT (tmpfs on older kernels) falls back`, async (t) => {
    if (!existsSync('/dev/shm')) {
      t.comment('no /dev/shm here')
      return
    }
    const shm = join('/dev/shm', `flexpipe-${process.pid}-${io}.bin`)
    writeFileSync(shm, data.subarray(0, 4 * page))
    t.teardown(() => rmSync(shm, { force: true }))
    const s = new b.Session(1, io)
    t.teardown(() => s.dispose())
    s.resize(mib, 0)
    const r = await s.readFile(shm, new Float64Array([0, 4 * page, 0]), { direct: true })
    t.equal(r.direct, directWorks(shm), `direct reported as the probe says (${r.direct})`)
    t.ok(arenaBytes(s, 0, 4 * page).equals(Buffer.from(data.subarray(0, 4 * page))), 'bytes equal')
  })

  t.test(`${io}: bandwidth stretches a read to bytes / bandwidth`, async (t) => {
    const s = new b.Session(2, io)
    t.teardown(() => s.dispose())
    const bytes = 10e6
    const big = join(dir, `big-${io}.bin`)
    const content = randomBytes(bytes, 2)
    writeFileSync(big, content)
    s.resize(bytes, 0)
    const start = performance.now()
    const r = await s.readFile(big, new Float64Array([0, bytes, 0]), { bandwidth: 50e6 })
    const wall = performance.now() - start
    t.comment(`10 MB at 50 MB/s: reported ${r.ms.toFixed(1)} ms, wall ${wall.toFixed(1)} ms`)
    t.ok(r.ms >= 190, `reported ${r.ms} ms >= 190`)
    t.ok(wall >= 190, `wall ${wall} ms >= 190`)
    t.ok(arenaBytes(s, 0, bytes).equals(Buffer.from(content)), 'throttled read is byte-exact')
    const fast = await s.readFile(big, new Float64Array([0, bytes, 0]), { bandwidth: 1e12 })
    t.ok(fast.ms < 190, `a fast enough bandwidth adds no sleep (${fast.ms.toFixed(1)} ms)`)
    unlinkSync(big)
  })

  t.test(`${io}: every read geometry returns the same bytes`, async (t) => {
    const s = new b.Session(2, io)
    t.teardown(() => s.dispose())
    s.resize(4 * mib, 0)
    // Ranges of the aligned part: a chunk boundary falls inside, at and beyond each of them.
    const ranges = new Float64Array([0, 3 * page, 0, page, 2 * mib + page, 3 * page, 3 * mib, 2 * page, 2 * mib + 4 * page])
    const file = readFileSync(path)
    for (const [chunkBytes, queueDepth] of [[page, 1], [page, 64], [3 * page, 5], [mib, 2], [64 * mib, 64], [256 << 10, 8]] as const) {
      for (const direct of [true, false]) {
        s.write(0, new Uint8Array(4 * mib))
        const r = await s.readFile(path, ranges, { direct, chunkBytes, queueDepth })
        const label = `${chunkBytes} B x ${queueDepth}, direct=${direct}`
        t.equal(r.bytes, 6 * page + 2 * mib, `${label}: bytes`)
        let same = true
        for (let i = 0; i < ranges.length; i += 3) {
          const [off, len, at] = [ranges[i]!, ranges[i + 1]!, ranges[i + 2]!]
          same &&= arenaBytes(s, at, len).equals(file.subarray(off, off + len))
        }
        t.ok(same, `${label}: every range equals the file`)
      }
    }
  })

  t.test(`${io}: a missing, deleted or shrunk file rejects with an IO error and a later read recovers`, async (t) => {
    const s = new b.Session(2, io)
    t.teardown(() => s.dispose())
    s.resize(4 * mib, 0)
    const p = join(dir, `shrinks-${io}.bin`)
    const content = randomBytes(2 * mib, 3)
    writeFileSync(p, content)
    const whole = new Float64Array([0, 2 * mib, 0])
    for (const direct of [false, true]) {
      await s.readFile(p, whole, { direct })
      truncateSync(p, 1000)
      await t.rejects(s.readFile(p, whole, { direct }), { code: 'ERR_FLEXPIPE_IO', message: /unexpected end of file/ })
      await t.rejects(s.readFile(p, whole, { direct }), { message: new RegExp(p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) })
      unlinkSync(p)
      await t.rejects(s.readFile(p, whole, { direct }), { code: 'ERR_FLEXPIPE_IO', message: /ENOENT|No such file/ })
      writeFileSync(p, content)
      const r = await s.readFile(p, whole, { direct })
      t.equal(r.bytes, 2 * mib, `direct=${direct}: restored file reads again`)
      t.ok(arenaBytes(s, 0, 2 * mib).equals(Buffer.from(content)), `direct=${direct}: bytes equal after recovery`)
    }
    await t.rejects(s.readFile(dir, whole), { code: 'ERR_FLEXPIPE_IO' }, 'a directory is an IO error, not a crash')
  })
}

t.test('readFile options are validated', async (t) => {
  const s = new b.Session(1, 'auto')
  t.teardown(() => s.dispose())
  s.resize(mib, 0)
  const r = new Float64Array([0, 16, 0])
  for (const bandwidth of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5' as never]) {
    t.throws(() => s.readFile(path, r, { bandwidth }), { name: 'RangeError', message: /options.bandwidth: expected a positive finite number/ })
  }
  for (const chunkBytes of [0, 4095, 4097, 8192 + 1, 128 * mib, Number.NaN, '4096' as never]) {
    t.throws(() => s.readFile(path, r, { chunkBytes }), { name: 'RangeError', message: /options.chunkBytes: expected a multiple of 4096/ })
  }
  for (const queueDepth of [0, -1, 1.5, 65, Number.NaN, '8' as never]) {
    t.throws(() => s.readFile(path, r, { queueDepth }), { name: 'RangeError', message: /options.queueDepth: expected an integer from 1 to 64/ })
  }
  t.throws(() => s.readFile(path, r, { direct: 'yes' as never }), TypeError)
  t.throws(() => s.readFile(path, r, 5 as never), TypeError)
  const ok = await s.readFile(path, r, {})
  t.same(ok, { direct: false, bytes: 16, ms: ok.ms })
})
