// SPDX-License-Identifier: Apache-2.0
// The op codes the planners encode programs with (lib/model/ops/native-op-codes.ts) are the addon's.
import t from 'tap'
import { nativeOpCode, nativeOpNames } from '../../lib/model/ops/native-op-codes.js'
import { binding } from '../../lib/native/binding.js'

t.test('the declared native op table is the addon\'s, name by name and in order', async (t) => {
  t.strictSame([...nativeOpNames], binding().opNames())
})

t.test('nativeOpCode gives each name its index and nothing for an unknown name', async (t) => {
  nativeOpNames.forEach((name, i) => t.equal(nativeOpCode(name), i, name))
  t.equal(nativeOpCode('NoSuchOp'), undefined)
})
