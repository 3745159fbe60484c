// SPDX-License-Identifier: Apache-2.0
// The fused 'Attention' native op (native/runtime/ops/nn_attention.cc) as a KernelCall, for callers
// that build one themselves: the elastic (STI) executor running a partial layer with some heads, and a
// graph-fusion pass replacing MatMul -> Softmax -> MatMul. No ONNX op maps to it by itself.
import type { KernelCall } from './op-def.js'

/** The op sizes its workspace for this many threads and clamps its threads to what it is given. */
const maxKernelThreads = 8

/** Workspace bytes for `threads` threads: attention_workspace_floats(seqKv, dh) floats each (attention.h). */
export function attentionWorkspaceBytes(seqKv: number, dh: number, threads = maxKernelThreads): number {
  return threads * 4 * ((dh + 8) * Math.ceil(seqKv / 16) * 16 + 16)
}

export interface AttentionCallOptions {
  /** Node inputs holding Q, K, V ([B, S, H*dh] or [S, H*dh]) and the optional additive mask. */
  readonly q: number
  readonly k: number
  readonly v: number
  readonly mask?: number
  readonly heads: number
  readonly dh: number
  readonly seqKv: number
  /** The heads to compute (default: all); O is [.., H*dh] with the others zero, or [.., n*dh] packed. */
  readonly list?: readonly number[]
  readonly causal?: boolean
  /** Default 1/sqrt(dh). */
  readonly scale?: number
}

/** The KernelCall of one Attention step (layout of ints/floats: above op_attention). */
export function attentionKernelCall(o: AttentionCallOptions): KernelCall {
  return {
    op: 'Attention',
    inputs: [o.q, o.k, o.v, o.mask ?? -1],
    ints: [o.heads, o.causal ? 1 : 0, ...(o.list ?? [])],
    floats: o.scale === undefined ? [] : [o.scale],
    outputs: 1,
    workspace: attentionWorkspaceBytes(o.seqKv, o.dh),
  }
}
