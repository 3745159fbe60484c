// SPDX-License-Identifier: Apache-2.0
// The 'DequantizeShard' native op (native/runtime/ops/quant_dequantize.cc) as a KernelCall, for the elastic
// (STI) executor: one shard blob in, the shard's float32 row blocks out. No ONNX op maps to it.
import type { KernelCall } from './op-def.js'

/** Bitwidths DequantizeShard accepts: FPQ1 blobs of 2..8 bits, or 32 for the raw float32 shard. */
export type ShardBits = 2 | 3 | 4 | 5 | 6 | 7 | 8 | 32

export interface DequantizeShardOptions {
  /** Node input holding the blob (a 1-D uint8 tensor of at least the blob's bytes). */
  readonly blob: number
  readonly bits: ShardBits
  /** How many float32 outputs the stream fills, in order (their element counts sum to the blob's count). */
  readonly outputs: number
}

/** The KernelCall of one DequantizeShard step (ints: [bits]). */
export function dequantizeShardKernelCall(o: DequantizeShardOptions): KernelCall {
  return { op: 'DequantizeShard', inputs: [o.blob], ints: [o.bits], floats: [], outputs: o.outputs }
}
