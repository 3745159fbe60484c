// SPDX-License-Identifier: Apache-2.0
// Shape buckets (lib/plan/dynamic/shape-buckets.ts): every value of a declared range lies in exactly
// one bucket, whose ceiling is the bucket's largest value; values outside the range are ShapeErrors
// naming the dim, the range and the option to change; probes lie inside their bucket.
import t from 'tap'
import { allBuckets, bucketOf, bucketProbes, checkDimRange, defaultCeilings, type DimRange } from '../../lib/plan/dynamic/shape-buckets.js'

t.test('default ceilings: powers of two above min and below max, then max', async (t) => {
  t.same(defaultCeilings(1, 128), [1, 2, 4, 8, 16, 32, 64, 128])
  t.same(defaultCeilings(8, 128), [8, 16, 32, 64, 128])
  t.same(defaultCeilings(80, 1280), [128, 256, 512, 1024, 1280])
  t.same(defaultCeilings(5, 5), [5])
  t.same(defaultCeilings(3, 9), [4, 8, 9])
})

t.test('every value of a range lies in one bucket, between its floor and its ceiling', async (t) => {
  for (const [min, max, ceilings] of [
    [1, 128, undefined],
    [8, 128, undefined],
    [80, 1280, undefined],
    [1, 100, [10, 50, 100]],
    [3, 3, undefined],
  ] as Array<[number, number, number[] | undefined]>) {
    const r = checkDimRange('d', { min, max, ceilings })
    const ranges = new Map<string, DimRange>([['d', r]])
    const all = allBuckets(ranges)
    t.equal(all.length, r.ceilings.length, `${min}..${max}: one bucket per ceiling`)
    let bad = 0
    for (let v = min; v <= max; v++) {
      const b = bucketOf(new Map([['d', v]]), ranges, () => 'x')
      const [lo, hi] = [b.lo.get('d')!, b.hi.get('d')!]
      if (!(lo <= v && v <= hi) || !r.ceilings.includes(hi) || all.filter((a) => a.key === b.key).length !== 1) bad++
      for (const p of bucketProbes(b)) if (p.get('d')! < lo || p.get('d')! > hi) bad++
    }
    t.equal(bad, 0, `${min}..${max}: every value in its bucket, probes inside`)
  }
})

t.test('two dims: the buckets are the boxes of both, largest first', async (t) => {
  const ranges = new Map<string, DimRange>([
    ['batch', checkDimRange('batch', { min: 1, max: 8 })],
    ['seq_len', checkDimRange('seq_len', { min: 1, max: 128 })],
  ])
  const all = allBuckets(ranges)
  t.equal(all.length, 4 * 8)
  t.same([...all[0]!.hi], [['batch', 8], ['seq_len', 128]], 'the largest box first')
  const b = bucketOf(new Map([['batch', 3], ['seq_len', 70]]), ranges, () => 'x')
  t.equal(b.key, 'batch=3..4,seq_len=65..128')
})

t.test('undeclared dims are bucketed by powers of two without end', async (t) => {
  const b = bucketOf(new Map([['n', 1000]]), new Map(), () => 'x')
  t.same([b.lo.get('n'), b.hi.get('n')], [513, 1024])
  t.same([bucketOf(new Map([['n', 1]]), new Map(), () => 'x').hi.get('n')], [1])
})

t.test('a value outside its declared range is a ShapeError naming the dim, the range and the remedy', async (t) => {
  const ranges = new Map<string, DimRange>([['seq_len', checkDimRange('seq_len', { min: 1, max: 128 })]])
  t.throws(() => bucketOf(new Map([['seq_len', 200]]), ranges, () => "input 'input_ids' dim 1"), {
    code: 'ERR_FLEXPIPE_SHAPE',
    message: /input 'input_ids' dim 1: 'seq_len' is 200, outside its declared range 1\.\.128; open the model with dims: \{ "seq_len": \[1, 200\] \}/,
  })
})

t.test('bad ranges and ceilings are ArgumentErrors', async (t) => {
  t.throws(() => checkDimRange('d', { min: 0, max: 4 }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  t.throws(() => checkDimRange('d', { min: 5, max: 4 }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  t.throws(() => checkDimRange('d', { min: 1, max: 4.5 }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  t.throws(() => checkDimRange('d', { min: 1, max: 64, ceilings: [32, 16, 64] }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  t.throws(() => checkDimRange('d', { min: 1, max: 64, ceilings: [16, 32] }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /last ceiling/ })
})
