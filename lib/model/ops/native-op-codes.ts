// SPDX-License-Identifier: Apache-2.0
// The native op table in its order (native/runtime/op_registry.cc): a program names each op by its index
// here. Declared, not read from the addon, so that the planners that encode programs need no build;
// test/native/op-codes.test.ts checks it against the addon's opNames().
export const nativeOpNames = [
  'Unary', 'IsNaN', 'IsInf', 'Clip', 'Dropout', 'Binary',
  'Compare', 'Pow', 'Where', 'Cast', 'Conv', 'ConvTranspose',
  'ConvMaxPool', 'ConvDepthwise', 'MaxPool', 'AveragePool', 'LpPool', 'GlobalAveragePool',
  'GlobalMaxPool', 'GlobalLpPool', 'Gemm', 'MatMul', 'BatchNormalization', 'InstanceNormalization',
  'LayerNormalization', 'LRN', 'MeanVarianceNormalization', 'Softmax', 'LogSoftmax', 'Hardmax',
  'Resize', 'DepthToSpace', 'SpaceToDepth', 'Attention', 'Transpose', 'Slice',
  'Expand', 'Tile', 'Concat', 'Split', 'Pad', 'Trilu',
  'Fill', 'Range', 'EyeLike', 'Gather', 'GatherElements', 'GatherND', 'ScatterND',
  'OneHot', 'Reduce', 'ArgReduce', 'CumSum', 'DequantizeShard', 'DequantizeLayer',
  'NonZero', 'TopK',
] as const

export type NativeOpName = (typeof nativeOpNames)[number]

const codes = new Map<string, number>(nativeOpNames.map((name, i) => [name, i]))

/** The native op code of a native op name, or undefined when the addon has no such op. */
export function nativeOpCode(name: string): number | undefined {
  return codes.get(name)
}
