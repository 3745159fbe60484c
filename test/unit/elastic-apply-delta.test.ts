// SPDX-License-Identifier: Apache-2.0
// applyDelta: what a re-plan writes, given what earlier plans left in the arena. Preloaded versions at
// their planned offset are not read again; plan constants already written are not written again,
// except those a layout made before the constants region grew may have overwritten.
import t from 'tap'
import { applyDelta, emptyArenaContent, type ElasticLayout } from '../../lib/plan/elastic/elastic-layout.js'
import type { ResidentWrite } from '../../lib/plan/execution-plan.js'
import type { BlobEntry } from '../../lib/package/index.js'

const residentBytes = 4096
const blob = (offset: number, paddedLength: number): BlobEntry => ({ offset, length: paddedLength, paddedLength }) as unknown as BlobEntry

/** A layout with its constants region ending at `constantsEnd`, the given constants and preloaded blobs. */
function layout(constantsEnd: number, constants: Array<[number, number]>, preload: Array<[string, number, number]>): ElasticLayout {
  const resident: ResidentWrite[] = [
    ...constants.map(([offset, bytes]) => ({ kind: 'data' as const, offset, data: new Uint8Array(bytes) })),
    { kind: 'file', path: 'p.fpk', ranges: new Float64Array(), mode: 'buffered' },
  ]
  const preloadWanted = preload.map(([name, offset, bytes]) => [name, blob(100_000 + offset, bytes), offset] as const)
  return {
    exec: {
      arenaBytes: 1 << 20,
      keepBytes: residentBytes,
      activationBase: 1 << 19,
      resident,
      regions: [
        { name: 'resident', offset: 0, bytes: residentBytes },
        { name: 'constants', offset: residentBytes, bytes: constantsEnd - residentBytes },
      ],
    },
    preloadWanted,
  } as unknown as ElasticLayout
}

const dataOffsets = (r: readonly ResidentWrite[]): number[] => r.filter((w) => w.kind === 'data').map((w) => w.offset)
const fileRanges = (r: readonly ResidentWrite[]): number[] => Array.from((r.find((w) => w.kind === 'file') as { ranges: Float64Array }).ranges)

t.test('a first apply writes every constant and reads every preloaded version', async (t) => {
  const a = layout(8192, [[4096, 8], [4160, 1000]], [['s0', 8192, 512], ['s1', 8704, 512]])
  const { exec, content } = applyDelta(a, residentBytes, emptyArenaContent)
  t.same(dataOffsets(exec.resident), [4096, 4160])
  t.same(fileRanges(exec.resident), [100_000 + 8192, 512, 8192, 100_000 + 8704, 512, 8704])
  t.equal(exec.keepBytes, residentBytes, 'nothing past the resident parameters is reused')
  t.same([...content.constants], [4096, 4160])
  t.same([...content.preload], [['s0', 8192], ['s1', 8704]])
})

t.test('re-applying writes nothing that is in place, and keeps it', async (t) => {
  const a = layout(8192, [[4096, 8], [4160, 1000]], [['s0', 8192, 512], ['s1', 8704, 512]])
  const first = applyDelta(a, residentBytes, emptyArenaContent)
  const again = applyDelta(a, residentBytes, first.content)
  t.same(dataOffsets(again.exec.resident), [], 'no constant written again')
  t.same(fileRanges(again.exec.resident), [], 'no preloaded version read again')
  t.equal(again.exec.keepBytes, 8704 + 512, 'the constants and the preload region are kept')
})

t.test('a new constant is written, the old ones are not; a shifted preload is read again', async (t) => {
  const a = layout(8192, [[4096, 8], [4160, 1000]], [['s0', 8192, 512]])
  const b = layout(12288, [[4096, 8], [4160, 1000], [8192, 4000]], [['s0', 12288, 512]])
  const afterA = applyDelta(a, residentBytes, emptyArenaContent)
  const toB = applyDelta(b, residentBytes, afterA.content)
  t.same(dataOffsets(toB.exec.resident), [8192], 'only the operand no plan packed before')
  t.same(fileRanges(toB.exec.resident), [100_000 + 12288, 512, 12288], 's0 moved up with the constants region: read again')
  t.equal(toB.exec.keepBytes, 4160 + 1000, 'the constants in place are kept')
  t.same([...toB.content.constants].sort((x, y) => x - y), [4096, 4160, 8192])
})

t.test('a layout made before the constants region grew forgets the constants it may overwrite', async (t) => {
  // a's preload region starts where b later put a new constant: after a runs, b's constant is gone.
  const a = layout(8192, [[4096, 8]], [['s0', 8192, 4096]])
  const b = layout(12288, [[4096, 8], [8192, 4000]], [])
  const afterB = applyDelta(b, residentBytes, applyDelta(a, residentBytes, emptyArenaContent).content)
  const backToA = applyDelta(a, residentBytes, afterB.content)
  t.same([...backToA.content.constants], [4096], "b's constant at 8192 lies in a's preload region: forgotten")
  t.same(fileRanges(backToA.exec.resident), [100_000 + 8192, 4096, 8192], "a's preload was overwritten by b's constant: read again")
  const backToB = applyDelta(b, residentBytes, backToA.content)
  t.same(dataOffsets(backToB.exec.resident), [8192], "b's constant is written again")
})
