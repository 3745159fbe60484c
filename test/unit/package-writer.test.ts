// SPDX-License-Identifier: Apache-2.0
// PackageWriter writes atomically (temp file, header last, rename), cleans up on abort, and checks its arguments.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ArgumentError, IOError, PackageError } from '../../lib/errors.js'
import { PackageReader } from '../../lib/package/reader.js'
import { PackageWriter } from '../../lib/package/writer.js'

const dir = mkdtempSync(join(tmpdir(), 'flexpipe-package-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('the package appears only when finished; until then a temp file without a header exists', async (t) => {
  const path = join(dir, 'atomic.fpk')
  const w = await PackageWriter.create(path, { producer: 'p' })
  await w.addBlob('a', new Uint8Array(5000).fill(1))
  t.same(readdirSync(dir).filter((f) => f.startsWith('atomic')), [w.tempPath.slice(dir.length + 1)], 'only the temp file exists')
  t.not(Buffer.from(readFileSync(w.tempPath).subarray(0, 8)).toString('latin1'), 'FLEXPIPE', 'no magic before finish')
  await t.rejects(PackageReader.open(w.tempPath), { code: 'ERR_FLEXPIPE_PACKAGE', message: /not a flexpipe package/ })
  await w.finish({})
  t.same(readdirSync(dir).filter((f) => f.startsWith('atomic')), ['atomic.fpk'], 'renamed into place, temp gone')
  const r = await PackageReader.open(path, { verify: 'all' })
  t.equal(r.blob('a').length, 5000)
  await r.close()
})

t.test('finishing over an existing package replaces it whole', async (t) => {
  const path = join(dir, 'replace.fpk')
  writeFileSync(path, 'an older file')
  const w = await PackageWriter.create(path, { producer: 'second' })
  await w.addBlob('x', new Uint8Array([9, 8, 7]))
  await w.finish(1)
  const r = await PackageReader.open(path)
  t.equal(r.manifest.producer, 'second')
  t.same(await r.readBlob('x'), new Uint8Array([9, 8, 7]))
  await r.close()
})

t.test('abort removes the temp file and leaves the target alone; the writer is then closed', async (t) => {
  const path = join(dir, 'aborted.fpk')
  const w = await PackageWriter.create(path, { producer: 'p' })
  await w.addBlob('a', new Uint8Array(10))
  await w.abort()
  await w.abort()
  t.same(readdirSync(dir).filter((f) => f.startsWith('aborted')), [])
  t.throws(() => w.addBlob('b', new Uint8Array(1)), PackageError)
  await t.rejects(w.finish({}), PackageError)
})

t.test('after finish the writer refuses more work', async (t) => {
  const w = await PackageWriter.create(join(dir, 'done.fpk'), { producer: 'p' })
  await w.finish({})
  t.throws(() => w.addBlob('late', new Uint8Array(1)), { code: 'ERR_FLEXPIPE_PACKAGE', message: /finished or aborted/ })
  await t.rejects(w.finish({}), { code: 'ERR_FLEXPIPE_PACKAGE' })
  await w.abort() // a no-op once finished
  t.ok(readdirSync(dir).includes('done.fpk'))
})

t.test('arguments are checked with messages naming the parameter', async (t) => {
  await t.rejects(PackageWriter.create('', { producer: 'p' }), ArgumentError)
  await t.rejects(PackageWriter.create(join(dir, 'x.fpk'), { producer: 3 as never }), { message: /producer/ })
  await t.rejects(PackageWriter.create(join(dir, 'x.fpk'), { producer: 'p', created: new Date('nope') }), { message: /created/ })
  await t.rejects(PackageWriter.create(join(dir, 'x.fpk'), { producer: 'p', manifestReserve: -1 }), { message: /manifestReserve/ })
  await t.rejects(PackageWriter.create(join(dir, 'no', 'such', 'dir.fpk'), { producer: 'p' }), IOError)
  const w = await PackageWriter.create(join(dir, 'args.fpk'), { producer: 'p' })
  t.throws(() => w.addBlob('', new Uint8Array(1)), { message: /name/ })
  t.throws(() => w.addBlob('a', [1, 2] as never), { message: /bytes/ })
  t.throws(() => w.addBlob('a', new Uint8Array(4), { dtype: 'float128' as never }), { message: /dtype/ })
  t.throws(() => w.addBlob('a', new Uint8Array(4), { dims: [-1] }), { message: /dims/ })
  t.throws(() => w.addBlob('a', new Uint8Array(4), { kind: 3 as never }), { message: /kind/ })
  t.throws(() => w.addBlob('a', new Uint8Array(12), { dtype: 'float32', dims: [2, 2] }), { message: /float32 \[2, 2\] does not match its 12 bytes/ })
  await w.addBlob('a', new Uint8Array(16), { dtype: 'float32', dims: [2, 2] })
  t.throws(() => w.addBlob('a', new Uint8Array(1)), { message: /already added/ })
  await t.rejects(w.finish(undefined), { message: /graph/ })
  await t.rejects(w.finish({}, [] as never), { message: /meta/ })
  await t.rejects(w.finish({ n: 1n }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /JSON/ })
  const m = await w.finish({ ok: true }) // argument errors leave the writer usable
  t.equal(m.blobs.length, 1)
})

t.test('a failing disk rejects with IOError, poisons later blobs and removes the temp file', async (t) => {
  const fsp = await import('node:fs/promises')
  const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
  const limit = 64 * 1024 // writes past this offset fail, as on a full disk
  const { PackageWriter: FailingWriter } = await t.mockImport<typeof import('../../lib/package/writer.js')>('../../lib/package/writer.js', {
    'node:fs/promises': {
      ...fsp,
      open: async (...args: Parameters<typeof fsp.open>) => {
        const h = await fsp.open(...args)
        return new Proxy(h, {
          get(target, key) {
            if (key === 'write') {
              return (buf: Uint8Array, off: number, len: number, pos: number) =>
                pos + len > limit ? Promise.reject(enospc) : target.write(buf, off, len, pos)
            }
            const v = Reflect.get(target, key)
            return typeof v === 'function' ? v.bind(target) : v
          },
        })
      },
    },
  })
  const path = join(dir, 'full.fpk')
  const w = await FailingWriter.create(path, { producer: 'p', manifestReserve: 0 })
  await w.addBlob('small', new Uint8Array(100))
  const big = w.addBlob('big', new Uint8Array(100_000))
  const after = w.addBlob('after', new Uint8Array(10))
  await t.rejects(big, { code: 'ERR_FLEXPIPE_IO', message: /failed to write package .*full\.fpk.*ENOSPC/ })
  await t.rejects(after, { code: 'ERR_FLEXPIPE_IO' }, 'later blobs report the first failure')
  await t.rejects(w.finish({}), { code: 'ERR_FLEXPIPE_IO' })
  t.same(readdirSync(dir).filter((f) => f.startsWith('full')), [], 'temp file removed, nothing at the target')

  // a manifest write that fails: finish rejects and cleans up
  const w2 = await FailingWriter.create(join(dir, 'full2.fpk'), { producer: 'p', manifestReserve: 0 })
  await w2.addBlob('a', new Uint8Array(10))
  await t.rejects(w2.finish({ big: 'x'.repeat(limit) }), { code: 'ERR_FLEXPIPE_IO', message: /ENOSPC/ })
  t.same(readdirSync(dir).filter((f) => f.startsWith('full2')), [])
})
