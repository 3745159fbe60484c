// SPDX-License-Identifier: Apache-2.0
// Hand-built program descriptors for native Session tests (layout: native/runtime/program.h).
import { binding } from '../../lib/native/binding.js'

/** tensors: [region, offset, dtype, ...dims]; ops: [code, nIn, nOut, nInts, nFloats, ins..., outs..., ints..., floats...]. */
export function program(tensors: number[][], ops: number[][]): Float64Array {
  const words = [1, tensors.length, ops.length]
  for (const [region, offset, dtype, ...dims] of tensors) {
    words.push(region!, offset!, dtype!, dims.length, ...dims, ...new Array<number>(8 - dims.length).fill(0))
  }
  for (const op of ops) words.push(...op)
  return new Float64Array(words)
}

/** The native op code of an op name. */
export function opCode(name: string): number {
  const code = binding().opNames().indexOf(name)
  if (code < 0) throw new Error(`no native op ${name}`)
  return code
}

/** A one-input, one-output Unary op record (ints: [function]). */
export function unaryOp(fn: number, input: number, output: number): number[] {
  return [opCode('Unary'), 1, 1, 1, 0, input, output, fn]
}

/** A two-input Binary op record (ints: [op]). */
export function binaryOp(op: number, a: number, b: number, output: number): number[] {
  return [opCode('Binary'), 2, 1, 1, 0, a, b, output, op]
}
