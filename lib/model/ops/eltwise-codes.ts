// SPDX-License-Identifier: Apache-2.0
// Function codes of the native elementwise ops; mirror of the enums in native/kernels/eltwise/eltwise.h.

/** ints[0] of the native 'Unary' op. */
export const UnaryCode = {
  identity: 0,
  relu: 1,
  sigmoid: 2,
  tanh: 3,
  exp: 4,
  log: 5,
  sqrt: 6,
  erf: 7,
  abs: 8,
  neg: 9,
  reciprocal: 10,
  floor: 11,
  ceil: 12,
  round: 13,
  sin: 14,
  cos: 15,
  tan: 16,
  asin: 17,
  acos: 18,
  atan: 19,
  sinh: 20,
  cosh: 21,
  asinh: 22,
  acosh: 23,
  atanh: 24,
  softplus: 25,
  softsign: 26,
  sign: 27,
  hardSigmoid: 28,
  hardSwish: 29,
  leakyRelu: 30,
  elu: 31,
  selu: 32,
  celu: 33,
  thresholdedRelu: 34,
  gelu: 35,
  geluTanh: 36,
  mish: 37,
  shrink: 38,
  logicalNot: 39,
} as const

/** ints[0] of the native 'Binary' op. */
export const BinaryCode = {
  add: 0,
  sub: 1,
  mul: 2,
  div: 3,
  pow: 4,
  mod: 5,
  fmod: 6,
  max: 7,
  min: 8,
  prelu: 9,
  shl: 10,
  shr: 11,
  bitAnd: 12,
  bitOr: 13,
  bitXor: 14,
} as const

/** ints[0] of the native 'Compare' op. */
export const CompareCode = {
  equal: 0,
  less: 1,
  greater: 2,
  lessEqual: 3,
  greaterEqual: 4,
} as const
