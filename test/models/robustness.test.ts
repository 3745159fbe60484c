// SPDX-License-Identifier: Apache-2.0
// Corrupted model files never crash the process: every mutation either opens and runs, or is
// rejected with a FlexpipeError.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { FlexpipeError, open } from '../../lib/index.js'
import { seededRandom } from '../../lib/cli/inputs.js'
import { fixtures, randomFloat } from '../helpers/data.js'
import { tempFile } from '../helpers/make-model.js'

t.test('byte-flipped ONNX files open and run or fail with a FlexpipeError', async (t) => {
  const original = readFileSync(join(fixtures, 'models', 'mobilenetv2_small.onnx'))
  const rand = seededRandom(2026)
  const outcomes = { ran: 0, rejected: 0 }
  for (let trial = 0; trial < 60; trial++) {
    const bytes = Uint8Array.from(original)
    // Flip bytes in the structural part of the file (graph, attributes, dims), not only in weights.
    const flips = 1 + Math.floor(rand() * 4)
    for (let i = 0; i < flips; i++) {
      const at = rand() < 0.7 ? Math.floor(rand() * 40000) : Math.floor(rand() * bytes.length)
      bytes[at] = Math.floor(rand() * 256)
    }
    const path = tempFile(`mutated-${trial}.onnx`, bytes)
    try {
      const engine = await open(path, { threads: 1 })
      try {
        await engine.infer({ input: randomFloat([1, 3, 96, 96], trial) })
        outcomes.ran++
      } finally {
        await engine.close()
      }
    } catch (err) {
      if (!(err instanceof FlexpipeError)) t.fail(`trial ${trial}: ${String(err)} is not a FlexpipeError`)
      outcomes.rejected++
    }
  }
  t.equal(outcomes.ran + outcomes.rejected, 60, `ran ${outcomes.ran}, rejected ${outcomes.rejected}`)
})
