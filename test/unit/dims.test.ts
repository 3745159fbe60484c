// SPDX-License-Identifier: Apache-2.0
// Symbolic dim arithmetic (lib/model/dims.ts): numbers fold; constants added to and subtracted from a
// symbolic expression fold into one offset, so equal sizes reached along different paths compare equal.
import t from 'tap'
import { dimAdd, dimCeilDiv, dimDiv, dimMul, dimSub } from '../../lib/model/dims.js'

t.test('numbers fold', async (t) => {
  t.equal(dimAdd(3, 4), 7)
  t.equal(dimSub(3, 4), -1)
  t.equal(dimDiv(7, 2), 3)
  t.equal(dimCeilDiv(7, 2), 4)
})

t.test('constants fold into one offset of a symbolic base', async (t) => {
  t.equal(dimAdd('h', 2), 'h+2')
  t.equal(dimSub(dimAdd('h', 2), 3), 'h-1')
  t.equal(dimAdd(dimSub('h', 1), 1), 'h')
  t.equal(dimAdd(2, dimAdd('h', 1)), 'h+3')
  t.equal(dimSub(dimAdd(dimMul('h', 2), 1), 1), 'h*2')
  // a padded 3x3 stride-2 window and a 1x1 stride-2 one: floor((h + 2 - 3) / 2) + 1 == floor((h - 1) / 2) + 1
  const padded = dimAdd(dimDiv(dimSub(dimAdd('h', 2), 3), 2), 1)
  const projected = dimAdd(dimDiv(dimSub('h', 1), 2), 1)
  t.equal(padded, projected)
  t.equal(padded, '((h-1)/2)+1')
  // a stride-1 1x1 after it: ((x - 1) / 1) + 1 == x
  t.equal(dimAdd(dimDiv(dimSub(padded, 1), 1), 1), padded)
})

t.test('offsets inside a division or a product are not moved out of it', async (t) => {
  t.equal(dimAdd(dimDiv(dimAdd('h', 1), 2), 1), '((h+1)/2)+1')
  t.equal(dimSub(dimCeilDiv(dimSub('w', 3), 2), 2), '(ceil((w-3)/2))-2')
  t.equal(dimAdd(dimMul(dimAdd('a', 1), 'b'), 1), '((a+1)*b)+1')
  t.equal(dimSub(dimAdd('a', 'b'), 'b'), '(a+b)-b', 'symbolic terms are not cancelled')
})
