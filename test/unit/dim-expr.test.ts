// SPDX-License-Identifier: Apache-2.0
// The shape functions of a bucket's template (lib/plan/dynamic/dim-expr.ts): every dim the symbolic
// arithmetic of lib/model/dims.ts writes compiles into a function that gives, for any values of its
// symbols, what the same arithmetic gives on those values as numbers.
import t from 'tap'
import { dimAdd, dimCeilDiv, dimDiv, dimMul, dimSub } from '../../lib/model/dims.js'
import type { Dim } from '../../lib/model/ir.js'
import { compileDim } from '../../lib/plan/dynamic/dim-expr.js'
import { prng as rng } from '../helpers/plan-problems.js'


type Op = (a: Dim, b: Dim) => Dim
const ops: Array<[string, Op]> = [
  ['add', dimAdd],
  ['sub', dimSub],
  ['mul', dimMul],
  ['div', (a, b) => dimDiv(a, b)],
  ['ceil', (a, b) => dimCeilDiv(a, b)],
]

const symbols = ['batch', 'seq_len', 'h', 'input_ids_dim1_0', 'batch-size']

t.test('random expressions built by dims.ts evaluate as the same arithmetic on numbers', async (t) => {
  const rand = rng(7)
  let checked = 0
  for (let trial = 0; trial < 400; trial++) {
    const values = new Map(symbols.map((s) => [s, 1 + Math.floor(rand() * 300)]))
    // Build the symbolic expression and the concrete one side by side.
    let sym: Dim = symbols[Math.floor(rand() * symbols.length)]!
    let num = values.get(sym as string)!
    const depth = 1 + Math.floor(rand() * 6)
    for (let k = 0; k < depth; k++) {
      const [name, op] = ops[Math.floor(rand() * ops.length)]!
      const useSymbol = rand() < 0.4
      const s = symbols[Math.floor(rand() * symbols.length)]!
      const c = 1 + Math.floor(rand() * 9)
      const [bSym, bNum] = useSymbol ? [s, values.get(s)!] : [c, c]
      if ((name === 'div' || name === 'ceil') && useSymbol) continue // dims.ts divides by constants (strides, heads)
      const nextNum = name === 'add' ? num + bNum : name === 'sub' ? num - bNum : name === 'mul' ? num * bNum : name === 'div' ? Math.floor(num / bNum) : Math.ceil(num / bNum)
      sym = op(sym, bSym)
      num = nextNum
    }
    const f = compileDim(sym, symbols)
    t.equal(f(values), num, `${String(sym)} at ${JSON.stringify(Object.fromEntries(values))}`)
    checked++
  }
  t.ok(checked > 300, `${checked} expressions checked`)
})

t.test('the forms a convolution chain writes', async (t) => {
  const f = compileDim('((h-1)/2)+1', ['h'])
  for (const h of [1, 2, 3, 224, 225]) t.equal(f(new Map([['h', h]])), Math.floor((h - 1) / 2) + 1, `h = ${h}`)
  const g = compileDim('ceil(w/4)*seq_len', ['w', 'seq_len'])
  t.equal(g(new Map([['w', 10], ['seq_len', 3]])), 9)
  t.equal(compileDim(12, [])(new Map()), 12)
})

t.test('a symbol with a dash is one symbol; unknown names and syntax are refused', async (t) => {
  t.equal(compileDim('batch-size*2', ['batch-size', 'batch'])(new Map([['batch-size', 5], ['batch', 100]])), 10)
  t.throws(() => compileDim('seq*2', ['seq_len']), { name: 'DimExprError' })
  t.throws(() => compileDim('max(a,b)', ['a', 'b']), { name: 'DimExprError' })
  t.throws(() => compileDim('(a+1', ['a']), { name: 'DimExprError' })
  t.throws(() => compileDim('ceil(a+1)', ['a']), { name: 'DimExprError' })
  t.throws(() => compileDim('a', ['a'])(new Map()), { name: 'DimExprError' }, 'an unbound symbol')
})
