// SPDX-License-Identifier: Apache-2.0
// Outputs written in place (lib/plan/memory/outputs-in-place.ts): which graph outputs the op computing
// them writes straight into infer()'s arrays, that programs then hold them in no arena bytes, and that
// the plain engine and a memory-budgeted package still compute what onnxruntime computes.
import t from 'tap'
import { open, type Tensor } from '../../lib/index.js'
import { hostTensor } from '../../lib/model/values.js'
import { concatsInPlace } from '../../lib/plan/memory/concat-in-place.js'
import { outputsInPlace } from '../../lib/plan/memory/outputs-in-place.js'
import { buildProgram } from '../../lib/plan/program-builder.js'
import { packageRunsAtMinimum } from '../helpers/budget.js'
import { compareTensors } from '../helpers/compare.js'
import { concreteGraph, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

const weights = seededWeights(31)

/**
 * x [1, 16, 8]:
 * y = Flatten(m), m = x · W [8, 512]     an op's output reshaped once: y and m in output buffer 0
 * z = Relu(x · W2 [8, 64])               an output also read by an op (u): buffer 1
 * u = Neg(z)                             buffer 2
 * f = Flatten(r), r = x · W3 [8, 32]     r is reshaped twice (f, and g for s): copied out of the arena
 * s = Sigmoid(g), g = Flatten(r, axis 2) buffer 4
 */
const model = makeModel({
  inputs: [{ name: 'x', dtype: 'float32', dims: [1, 16, 8] }],
  outputs: ['y', 'z', 'u', 'f', 's'].map((name) => ({ name, dtype: 'float32' as const })),
  initializers: [weights('W', [8, 512], 0.5), weights('W2', [8, 64], 0.5), weights('W3', [8, 32], 0.5)],
  nodes: [
    { op: 'MatMul', inputs: ['x', 'W'], outputs: ['m'] },
    { op: 'Flatten', inputs: ['m'], outputs: ['y'], int: { axis: 1 } },
    { op: 'MatMul', inputs: ['x', 'W2'], outputs: ['z0'] },
    { op: 'Relu', inputs: ['z0'], outputs: ['z'] },
    { op: 'Neg', inputs: ['z'], outputs: ['u'] },
    { op: 'MatMul', inputs: ['x', 'W3'], outputs: ['r'] },
    { op: 'Flatten', inputs: ['r'], outputs: ['f'], int: { axis: 1 } },
    { op: 'Flatten', inputs: ['r'], outputs: ['g'], int: { axis: 2 } },
    { op: 'Sigmoid', inputs: ['g'], outputs: ['s'] },
  ],
})
const isActivation = (v: { tensor?: unknown }) => v.tensor === undefined && hostTensor(v as never) === undefined

t.test('outputsInPlace takes outputs one op computes whole, through reshapes aliased once', async (t) => {
  const { graph, inferred } = concreteGraph(model, [1, 16, 8])
  const concats = concatsInPlace(graph, inferred, isActivation)
  const map = outputsInPlace(graph, inferred, concats, isActivation, () => true)
  t.same([...map].sort(), [['m', 0], ['s', 4], ['u', 2], ['y', 0], ['z', 1]], 'y with m, z, u and s; f is left to copy (r is reshaped twice)')
  t.same([...outputsInPlace(graph, inferred, concats, isActivation, (name) => name !== 'y')].sort(), [['s', 3], ['u', 1], ['z', 0]], 'an output returned otherwise shifts the buffer indexes')

  // only activation bytes are compared: where the constants would be placed does not matter here
  const constantsAtZero = () => ({ offset: 0, dtype: 'float32' as const, dims: [1] })
  const copied = buildProgram(graph, inferred, constantsAtZero)
  const inPlace = buildProgram(graph, inferred, constantsAtZero, { outputsInPlace: true })
  // y/m (32 KiB) and the others were live together at the end; only f's 2 KiB stay in the arena
  t.ok(inPlace.activationBytes <= copied.activationBytes - 16 * 512 * 4, `activation bytes ${inPlace.activationBytes} against ${copied.activationBytes} when copied out`)
  t.same(inPlace.outputs.map((o) => o.source.kind), ['tensor', 'tensor', 'tensor', 'tensor', 'tensor'], 'every output still comes from a program tensor')
})

t.test('the plain engine and a budgeted package write outputs in place and match onnxruntime', async (t) => {
  const path = tempFile('outputs-in-place.onnx', model)
  const feeds = { x: seededInput([1, 16, 8], 4) }
  const want = await runOrt(path, feeds)
  const check = (got: Record<string, Tensor>, what: string): void => {
    for (const name of ['y', 'z', 'u', 'f', 's']) {
      const c = compareTensors(got[name]!, want[name]!, 1e-5, 1e-5)
      t.ok(c.ok, `${what}: ${name} max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
    }
  }
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    const first = await engine.infer(feeds)
    const second = await engine.infer(feeds)
    await engine.close()
    t.not(first.y!.data, second.y!.data, 'each run returns its own arrays')
    check(first, `plain engine, ${threads} threads, first run`)
    check(second, `plain engine, ${threads} threads, second run`)
  }
  const { runs } = await packageRunsAtMinimum(t, path, feeds)
  for (const r of runs) check(r.outputs, `package at ${r.budget ?? 'unlimited'} budget`)
})
