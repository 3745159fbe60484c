// SPDX-License-Identifier: Apache-2.0
// PackageReader's API around valid packages: lookups, closing, OS errors, a file shrunk after open.
import { mkdtempSync, rmSync, truncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { PackageError } from '../../lib/errors.js'
import { PackageReader } from '../../lib/package/reader.js'
import { PackageWriter } from '../../lib/package/writer.js'

const dir = mkdtempSync(join(tmpdir(), 'flexpipe-package-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

async function make(name: string): Promise<string> {
  const path = join(dir, name)
  const w = await PackageWriter.create(path, { producer: 'p', manifestReserve: 0 })
  for (let i = 0; i < 7; i++) await w.addBlob(`layer${i}.w`, new Uint8Array(3000 + i).fill(i + 1))
  await w.finish({})
  return path
}

t.test('blob() names a missing blob and lists some that exist', async (t) => {
  const r = await PackageReader.open(await make('lookup.fpk'))
  const err = t.throws(() => r.blob('layer9.w')) as PackageError
  t.ok(err instanceof PackageError)
  t.equal(err.blob, 'layer9.w')
  t.match(err.message, /has no blob named 'layer9\.w' \(it has 7: 'layer0\.w', .*, \.\.\.\)/)
  await t.rejects(r.readBlob('layer9.w'), { code: 'ERR_FLEXPIPE_PACKAGE', blob: 'layer9.w' })
  await r.close()
})

t.test('a closed reader refuses reads; close is idempotent', async (t) => {
  const r = await PackageReader.open(await make('closed.fpk'))
  await r.close()
  await r.close()
  await t.rejects(r.readBlob('layer0.w'), { code: 'ERR_FLEXPIPE_PACKAGE', message: /closed/ })
  await t.rejects(r.verifyAll(), { code: 'ERR_FLEXPIPE_PACKAGE', message: /closed/ })
})

t.test('a missing file is an IO error; bad options are argument errors', async (t) => {
  await t.rejects(PackageReader.open(join(dir, 'missing.fpk')), { code: 'ERR_FLEXPIPE_IO', message: /ENOENT/ })
  await t.rejects(PackageReader.open(dir), { code: 'ERR_FLEXPIPE_IO', message: /EISDIR/ })
  await t.rejects(PackageReader.open(''), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  await t.rejects(PackageReader.open(join(dir, 'x'), { verify: 'some' as never }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /verify/ })
})

t.test('a package shrunk after open makes reads of the lost blobs fail naming them', async (t) => {
  const path = await make('shrunk.fpk')
  const r = await PackageReader.open(path)
  const cut = r.blob('layer5.w').offset + 10
  truncateSync(path, cut)
  t.equal((await r.readBlob('layer4.w')).length, 3004, 'blobs before the cut still read')
  await t.rejects(r.readBlob('layer5.w'), {
    code: 'ERR_FLEXPIPE_PACKAGE',
    blob: 'layer5.w',
    message: new RegExp(`blob 'layer5\\.w' ends at byte \\d+, but the file now ends at byte ${cut}.*truncated`),
  })
  await t.rejects(r.verifyAll(), { code: 'ERR_FLEXPIPE_PACKAGE', blob: 'layer5.w' })
  await r.close()
})
