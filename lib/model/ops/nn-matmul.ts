// SPDX-License-Identifier: Apache-2.0
// Gemm and MatMul (float32): output dims with numpy matmul rules and bias broadcasting; constant B
// operands are packed once at plan time (prepack gemm_pack_b) for the packed-panel GEMM driver.
//
// Native op ints (native/runtime/ops/nn_gemm.cc): Gemm [transA, transB, packedB, (n0, n1)], MatMul
// [packedB, (n0, n1)]. The optional trailing [n0, n1] make a weight (column) slice: only with
// packedB = 1, B is then gemm_pack_b's packing of weight columns [n0, n1) only (prepack ints
// [transB, n0, n1]) and the op writes only columns [n0, n1) of the full output Y (bias and fused clamp
// by absolute column; other columns untouched). The calls built here never slice (whole weights).
import { attrFloat, attrInt } from '../attrs.js'
import { broadcastDims, concrete, isConcrete } from '../dims.js'
import { fusedClamp } from '../fuse-activations.js'
import type { Dim, ValueInfo } from '../ir.js'
import { info, type KernelCall, type OpDef } from './op-def.js'
import { input, optionalInput, shapeError, unsupported } from './op-util.js'

function sameDim(a: Dim, b: Dim): boolean {
  return a === b || !isConcrete(a) || !isConcrete(b)
}

/** Workspaces are sized for this many threads; the native op uses fewer if the session has fewer. */
export const maxKernelThreads = 8

/**
 * Bytes of GEMM workspace for an m x n x k product on `threads` threads: an upper bound, over every
 * ISA's blocking, of gemm_workspace_bytes in native/runtime/gemm_driver.cc (mr <= 16, nr <= 16,
 * mc <= 144, kc <= 768, a tile <= 256 floats). rawB: B is packed into the workspace on each run.
 */
export function gemmWorkspaceBytes(m: number, n: number, k: number, threads: number, rawB: boolean): number {
  const align = (bytes: number): number => Math.ceil(bytes / 64) * 64
  const aBlock = Math.max(1, Math.min(m + 15, 144) * Math.min(k, 768))
  const perThread = align(aBlock * 4) + align(256 * 4)
  return 64 + (rawB ? align((n + 15) * k * 4) : 0) + threads * perThread
}

/** A constant float32 2-D operand: worth packing once at plan time. */
function packable(v: ValueInfo | undefined): boolean {
  return v !== undefined && v.tensor !== undefined && v.dtype === 'float32' && v.dims.length === 2
}

const count = (dims: readonly number[]): number => dims.reduce((p, d) => p * d, 1)

const gemm: OpDef = {
  opType: 'Gemm',
  infer(ctx) {
    const a = input(ctx, 0)
    const b = input(ctx, 1)
    const c = optionalInput(ctx, 2)
    if (a.dtype !== 'float32' || b.dtype !== 'float32' || (c !== undefined && c.dtype !== 'float32')) {
      throw unsupported(ctx, `dtype ${a.dtype} (only float32)`)
    }
    if (a.dims.length !== 2 || b.dims.length !== 2) {
      throw shapeError(ctx, `A and B must be 2-D (got ranks ${a.dims.length} and ${b.dims.length})`)
    }
    const transA = attrInt(ctx.node, 'transA', 0) !== 0
    const transB = attrInt(ctx.node, 'transB', 0) !== 0
    const m = a.dims[transA ? 1 : 0]!
    const k = a.dims[transA ? 0 : 1]!
    const kb = b.dims[transB ? 1 : 0]!
    const n = b.dims[transB ? 0 : 1]!
    if (!sameDim(k, kb)) throw shapeError(ctx, `inner dims differ (${k} vs ${kb})`)
    const out: Dim[] = [m, n]
    if (c !== undefined) {
      if (c.dims.length > 2) throw shapeError(ctx, `C has rank ${c.dims.length} (at most 2)`)
      const bc = broadcastDims(out, c.dims, `node '${ctx.node.name}' (Gemm)`)
      if (!bc.every((d, i) => sameDim(d, out[i]!))) {
        throw shapeError(ctx, `C [${c.dims}] does not broadcast to [${out}]`)
      }
    }
    const alpha = attrFloat(ctx.node, 'alpha', 1)
    const beta = attrFloat(ctx.node, 'beta', 1)
    const packB = packable(ctx.inputs[1])
    const clamp = fusedClamp(ctx.node)
    return {
      outputs: [info('float32', out)],
      kernel: (): KernelCall => {
        const [mm, nn] = concrete(out, 'Gemm output')
        const kk = concrete([k], 'Gemm K')[0]!
        return {
          op: 'Gemm',
          inputs: [0, 1, c === undefined ? -1 : 2],
          ints: [transA ? 1 : 0, transB ? 1 : 0, packB ? 1 : 0],
          floats: clamp === undefined ? [alpha, beta] : [alpha, beta, clamp.min, clamp.max],
          workspace: gemmWorkspaceBytes(mm!, nn!, kk, maxKernelThreads, !packB),
          ...(packB ? { prepack: [{ input: 1, transform: 'gemm_pack_b', ints: [transB ? 1 : 0] }] } : {}),
        }
      },
    }
  },
}

const matMul: OpDef = {
  opType: 'MatMul',
  infer(ctx) {
    const a = input(ctx, 0)
    const b = input(ctx, 1)
    if (a.dtype !== 'float32' || b.dtype !== 'float32') throw unsupported(ctx, `dtype ${a.dtype} (only float32)`)
    if (a.dims.length < 1 || b.dims.length < 1) throw shapeError(ctx, 'MatMul operands must have rank >= 1')
    const ad = a.dims.length === 1 ? [1, a.dims[0]!] : a.dims
    const bd = b.dims.length === 1 ? [b.dims[0]!, 1] : b.dims
    const k = ad[ad.length - 1]!
    const kb = bd[bd.length - 2]!
    if (!sameDim(k, kb)) throw shapeError(ctx, `inner dims differ (${k} vs ${kb})`)
    const batch = broadcastDims(ad.slice(0, -2), bd.slice(0, -2), `node '${ctx.node.name}' (MatMul)`)
    const out: Dim[] = [...batch]
    if (a.dims.length > 1) out.push(ad[ad.length - 2]!)
    if (b.dims.length > 1) out.push(bd[bd.length - 1]!)
    // A bias (fuse-matmul-bias.ts): float32 [N] added to every row, with a constant 2-D B.
    const bias = optionalInput(ctx, 2)
    if (bias !== undefined) {
      if (!packable(b)) throw unsupported(ctx, 'a bias input without a constant 2-D float32 B')
      if (bias.dtype !== 'float32' || bias.dims.length !== 1 || !sameDim(bias.dims[0]!, bd[bd.length - 1]!)) {
        throw shapeError(ctx, `the bias must be float32 [N = ${bd[bd.length - 1]}] (got ${bias.dtype} [${bias.dims}])`)
      }
    }
    return {
      outputs: [info('float32', out)],
      kernel: () => {
        const call = matMulCall(concrete(a.dims, 'MatMul A'), concrete(b.dims, 'MatMul B'), concrete(out, 'MatMul Y'), packable(b))
        const clamp = fusedClamp(ctx.node)
        const withBias = bias === undefined ? call : { ...call, inputs: [0, 1, 2] }
        return clamp === undefined ? withBias : { ...withBias, floats: [clamp.min, clamp.max] }
      },
    }
  },
}

/**
 * The native MatMul call. Packed B (constant 2-D): one GEMM of batch * M rows. Raw B: one GEMM when B
 * is 2-D and A is not broadcast, else per-batch GEMMs, with room for min(8, batches) one-thread
 * workspaces when that stays small (attention's many small products run a batch per thread).
 */
function matMulCall(a: number[], b: number[], y: number[], packB: boolean): KernelCall {
  const k = a[a.length - 1]!
  const n = b.length === 1 ? 1 : b[b.length - 1]!
  const m = a.length === 1 ? 1 : a[a.length - 2]!
  const batches = count(y) / Math.max(1, m * n)
  const call = { op: 'MatMul', inputs: [0, 1], floats: [] }
  if (packB) {
    const rows = count(a) / Math.max(1, k)
    return {
      ...call,
      ints: [1],
      workspace: gemmWorkspaceBytes(rows, n, k, maxKernelThreads, false),
      prepack: [{ input: 1, transform: 'gemm_pack_b', ints: [0] }],
    }
  }
  if (count(b) === k * n && count(a) === batches * m * k) {
    return { ...call, ints: [0], workspace: gemmWorkspaceBytes(batches * m, n, k, maxKernelThreads, true) }
  }
  const shared = gemmWorkspaceBytes(m, n, k, maxKernelThreads, true)
  const perBatch = Math.min(maxKernelThreads, batches) * gemmWorkspaceBytes(m, n, k, 1, true)
  const workspace = batches > 1 && perBatch <= Math.max(shared, 4 << 20) ? Math.max(perBatch, shared) : shared
  return { ...call, ints: [0], workspace }
}

export const matmulOps: OpDef[] = [gemm, matMul]
