#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Estimates flexpipe's latency on a Raspberry Pi 5 (4x Cortex-A76, 2.4 GHz) for MobileNetV2 and ResNet-50
// from the cycle counts of the NEON kernels each layer runs. docs/benchmarks/raspberry-pi-5-estimate.md
// derives every constant below; this is an estimate, not a measurement (nothing runs on arm64 here).
//   node scripts/bench/pi5-estimate.mjs [--layers]
// Needs dist/ (npm run build) and .cache/zoo-models/{mobilenet_v2,resnet50}.onnx (scripts/bench/export_zoo.py).
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const load = async (m) => import(pathToFileURL(join(root, 'dist/lib', m)).href)
const { loadOnnx } = await load('model/onnx-import.js')
const { fuseGraph, symbolicShapes } = await load('model/fuse-graph.js')
const { inferGraph } = await load('model/infer-graph.js')
const { foldNative } = await load('runtime/fold-native.js')
const { convAlgoCode } = await load('model/ops/conv-cost.js')
const algoName = new Map(Object.entries(convAlgoCode).map(([k, v]) => [v, k]))

const hz = 2.4e9
// Cycles on one A76 core (2 FP/NEON pipes, 2 load/store pipes, 4-wide decode), from the disassembly:
const gemmStep = 12.5 // 8x12 tile, A read in place: 24 fmla + 1 ld1r on the FP pipes per k, 25 / 2
const gemmTile = 75 // per 8x12 tile call: zeroing, epilogue (row bias, residual, clamp), driver, call
const narrowCol = 2 // narrow 16-row panel: 4 fmla per column and k step on 2 pipes (+0.5 per 6-column group)
const narrowCall = 45, narrowStore = 0.6 // per (panel, column group, k block) call; per output element
const wgCall = 80 // Winograd 6x16 tile GEMM (C steps of gemmStep): per call
const wgIn = { 8: 600, 4: 80 }, wgOut = { 8: 600, 4: 60 } // per (tile, 8 channels); alpha 8 = F(6,3), 4 = F(2,3)
const dwOut = { 1: 3.0, 2: 4.1 }, dwCopy = 0.15 // depthwise 3x3 per output (stride 1 / 2); padded copy per float
const stemFmla = { r6: 35 / 24, rest: 0.7 } // conv_stem_rows per fmla: 6-channel blocks (spilled) / the rest
const hiCompute = 1.3 // high end: 1024^3 GEMM at 81% of an FMA loop on the Xeon VM (intel-xeon-avx512.md)
const bw = { 1: [8e9, 6e9], 4: [10e9, 8e9] } // DRAM bytes/s [low, high estimate]: assumed, not measured
const threadEff = [0.95, 0.8] // of a balanced 4-way split; Zen 4, 2 threads: ResNet-50 1.96x, MobileNetV2 1.53x
const forkJoin = [3e-6, 25e-6] // per parallel region: assumed / MobileNetV2's loss per op at 2 threads on Zen 4
const callOverhead = [0.1e-3, 0.3e-3] // per infer() call: 18-108 us on Zen 4 (amd-epyc-zen4.md), A76 slower
const bigTensor = 1 << 20 // activations from 1 MiB go to DRAM (L2 512 KiB per core, L3 2 MiB shared)

const cdiv = (a, b) => Math.ceil(a / b)
const prod = (d) => d.reduce((a, b) => a * b, 1)

function gemmCycles(M, K, N) { // runtime/gemm_driver.cc: k blocks of <= 256, B panels copied when K > 64
  const kb = cdiv(K, 256), kc = cdiv(K, kb), panels = cdiv(N, 12)
  const copyB = K > 64 && M >= 32 ? kb * panels * kc * 3 : 0
  return kb * cdiv(M, 8) * panels * (kc * gemmStep + gemmTile) + copyB
}
function narrowCycles(M, K, N) { // runtime/gemm_narrow.cc: balanced groups of <= 6 columns, k blocks of 256
  const groups = cdiv(Math.min(N, 256), 6) * cdiv(N, 256), panels = cdiv(M, 16)
  return panels * K * (narrowCol * N + 0.5 * groups) + panels * groups * cdiv(K, 256) * narrowCall + M * N * narrowStore
}
function winogradCycles(alpha, C, M, H, W) { // runtime/conv_winograd.h: blocks of <= 2304 / alpha^2 tiles
  const tiles = cdiv(H, alpha - 2) * cdiv(W, alpha - 2), blockMax = Math.floor(2304 / (alpha * alpha))
  let slots = 0 // the 6x16 GEMM computes 6 tiles per call, padding the last group of a block
  for (let t = tiles; t > 0; t -= blockMax) slots += cdiv(Math.min(t, blockMax), 6) * 6
  const gemm = alpha * alpha * cdiv(M, 16) * (slots / 6) * (C * gemmStep + wgCall)
  const xf = tiles * (cdiv(C, 8) * wgIn[alpha] + cdiv(M, 8) * wgOut[alpha])
  return { cyc: gemm + xf, blocks: cdiv(tiles, blockMax) }
}
function dwCycles(C, OH, OW, s, IH, IW) { // 4 columns per step; the plane is copied zero-padded first
  return C * ((OH * OW * dwOut[s] * cdiv(OW, 4) * 4) / OW + dwCopy * (IH + 2) * (IW + 2))
}
function stemCycles(C, M, K, OH, OW) { // blocks of 6 output channels x 16 columns, one fmla per 4 columns
  const r6 = Math.floor(M / 6) * 6
  return OH * C * K * K * cdiv(OW, 4) * (r6 * stemFmla.r6 + (M - r6) * stemFmla.rest)
}
// Bands of the fused ops and the stem rows they compute (overlaps recomputed): runtime/conv_band_rows.h.
function bands(M, OW, outRows, stride, extent) {
  const target = Math.max(extent, Math.floor((512 * 1024) / (4 * M * OW)))
  const per = Math.max(1, Math.floor((target - extent) / stride) + 1)
  let n = cdiv(outRows, per)
  if (n > 1 && n % 2) n++
  const rows = cdiv(outRows, n)
  n = cdiv(outRows, rows)
  return { n, mid: n * ((rows - 1) * stride + extent) }
}

// The kernel classes a step runs: FLOPs, cycles at 1 thread, DRAM bytes, work items for 4 threads.
function classify(step) {
  const { node, inputs, outputs } = step
  const y = outputs[0].dims, x = inputs[0]?.dims, w = inputs[1]?.dims
  const big = (d) => (d && prod(d) * 4 >= bigTensor ? prod(d) * 4 : 0)
  if (node.opType === 'Gemm') { // batch 1: one row of the 8x12 tile, bound by loading B (~2 cycles per 12 columns)
    return [{ cls: 'FC + pooling', flops: 2 * prod(w), cyc: prod(w) / 6, bytes: prod(w) * 4, units: 1 }]
  }
  if (node.opType !== 'Conv') return [{ cls: 'FC + pooling', flops: 0, cyc: prod(x) * 0.5, bytes: 0, units: 1 }]
  const [M, Cg, KH, KW] = w, C = Cg * (node.attrs.get('group') ?? 1), s = node.attrs.get('strides')?.[0] ?? 1
  const wBytes = prod(w) * 4, op = step.kernel.op
  if (op === 'ConvMaxPool') { // ResNet's stem and max pool in bands (runtime/conv_pool.h)
    const OH = cdiv(x[2], s), OW = cdiv(x[3], s), b = bands(M, OW, y[2], 2, 3)
    const cyc = stemCycles(C, M, KH, b.mid, OW) + prod(y)
    return [{ cls: 'stem 7x7 + max pool', flops: 2 * C * KH * KW * M * OH * OW, cyc, bytes: wBytes + big(x) + big(y), units: b.n }]
  }
  if (op === 'ConvDepthwise') { // a 1x1 expansion or the stem, and the depthwise after it (runtime/conv_depthwise.h)
    const MH = cdiv(x[2], s), MW = cdiv(x[3], s), ds = node.attrs.get('_dw.strides')[0], b = bands(M, MW, y[2], ds, 3)
    const first = KH === 1
      ? { cls: '1x1 GEMM 8x12', flops: 2 * C * M * MH * MW, cyc: gemmCycles(M, C, (MW * b.mid) / b.n) * b.n }
      : { cls: 'stem 3x3', flops: 2 * C * KH * KW * M * MH * MW, cyc: stemCycles(C, M, KH, b.mid, MW) }
    const dwc = dwCycles(M, y[2], y[3], ds, b.mid, MW)
    return [
      { ...first, bytes: wBytes + big(x) + big(y), units: b.n },
      { cls: 'depthwise 3x3', flops: 18 * prod(y), cyc: dwc, bytes: 0, units: b.n, regions: 0 },
    ]
  }
  const OH = y[2], OW = y[3], P = OH * OW, K = Cg * KH * KW, flops = 2 * K * M * P
  const io = big(x) + big(y) + (inputs[3] ? big(inputs[3].dims) : 0) // a fused residual is read too
  switch (algoName.get(step.kernel.ints.at(-3))) {
    case 'depthwise':
      return [{ cls: 'depthwise 3x3', flops, cyc: dwCycles(C, OH, OW, s, x[2], x[3]), bytes: wBytes + io, units: C }]
    case 'gemm1x1':
      return [{ cls: '1x1 GEMM 8x12', flops, cyc: gemmCycles(M, K, P), bytes: wBytes + io, units: cdiv(M, 8) * cdiv(P, 12) }]
    case 'im2col': { // the column matrix (ResNet's strided 1x1 downsample) is written first
      const cyc = gemmCycles(M, K, P) + K * P * 0.25
      return [{ cls: 'im2col + GEMM 8x12', flops, cyc, bytes: wBytes + io, units: cdiv(M, 8) * cdiv(P, 12) }]
    }
    case 'narrow': { // not 1x1 stride 1: phase planes, OH rows of OW + (KW - 1) / s virtual columns
      const inPlace = KH === 1 && s === 1, cols = inPlace ? P : OH * (OW + Math.floor((KW - 1) / s))
      const fill = inPlace ? 0 : 0.25 * prod(x)
      const bytes = cdiv(M, 16) * 16 * K * 4 + io
      return [{ cls: `narrow GEMM, ${KH}x${KW}`, flops, cyc: narrowCycles(M, K, cols) + fill, bytes, units: cdiv(M, 16), regions: fill ? 2 : 1 }]
    }
    case 'winograd63':
    case 'winograd23': { // the transformed filter: alpha^2 x round_up(M, 16) x C floats, once per tile block
      const a = step.kernel.ints.at(-3) === 3 ? 8 : 4, r = winogradCycles(a, C, M, OH, OW)
      const u = a * a * cdiv(M, 16) * 16 * C * 4
      return [{ cls: `Winograd F(${a - 2},3)`, flops, cyc: r.cyc, bytes: u + io, bytesHigh: u * r.blocks + io, units: cdiv(M, 16) * 6, regions: 2 * r.blocks }]
    }
    default:
      throw new Error(`${node.name}: algorithm ${algoName.get(step.kernel.ints.at(-3))} is not modelled`)
  }
}

// Seconds of one entry at `threads`, [low, high]: compute and DRAM traffic overlap fully (low) or not at all (high).
function seconds(e, threads) {
  const balance = Math.min(1, e.units / (threads * cdiv(e.units, threads)))
  const eff = threads === 1 ? [1, 1] : threadEff.map((f) => f * balance)
  const regions = threads === 1 ? 0 : (e.regions ?? 1)
  const c = [e.cyc / hz / (threads * eff[0]), (e.cyc * hiCompute) / hz / (threads * eff[1])]
  const m = [e.bytes / bw[threads][0], (e.bytesHigh ?? e.bytes) / bw[threads][1]]
  return [Math.max(c[0], m[0]) + regions * forkJoin[0], c[1] + m[1] + regions * forkJoin[1]]
}

const ms = (v) => `${(v[0] * 1e3).toFixed(1)}-${(v[1] * 1e3).toFixed(1)}`
for (const name of ['mobilenet_v2', 'resnet50']) {
  const src = await loadOnnx(join(root, '.cache/zoo-models', `${name}.onnx`))
  const inputs = new Map([[src.inputs[0].name, { dtype: 'float32', dims: [1, 3, 224, 224] }]])
  const cache = new Map()
  const { graph } = fuseGraph(src, inputs, symbolicShapes(inputs, foldNative, cache))
  const steps = inferGraph(graph, inputs, { concrete: true, fold: foldNative, foldCache: cache }).steps
  const byClass = new Map(), total = { 1: [...callOverhead], 4: [...callOverhead] }
  for (const step of steps.filter((s) => s.kernel)) {
    for (const e of classify(step)) {
      const row = byClass.get(e.cls) ?? { n: 0, flops: 0, mb: 0, 1: [0, 0], 4: [0, 0] }
      row.n++, (row.flops += e.flops), (row.mb += e.bytes / 1e6)
      for (const t of [1, 4]) seconds(e, t).forEach((v, i) => ((row[t][i] += v), (total[t][i] += v)))
      byClass.set(e.cls, row)
      if (process.argv.includes('--layers')) {
        const perCycle = e.flops ? (e.flops / e.cyc).toFixed(1) : '-'
        console.log(`${step.node.name}  ${e.cls}  ${(e.flops / 1e6).toFixed(1)} MFLOP  ${perCycle} FLOP/cycle  1 thread ${ms(seconds(e, 1))} ms`)
      }
    }
  }
  const gflop = [...byClass.values()].reduce((a, r) => a + r.flops, 0) / 1e9
  console.log(`\n${name}, 224x224, batch 1: ${gflop.toFixed(2)} GFLOP as direct convolutions (multiply and add counted apart)`)
  console.log('| layer class | kernels | GFLOP | DRAM MB | 1 thread ms | 4 threads ms |\n|---|---|---|---|---|---|')
  for (const [cls, r] of byClass) {
    console.log(`| ${cls} | ${r.n} | ${(r.flops / 1e9).toFixed(3)} | ${r.mb.toFixed(1)} | ${ms(r[1])} | ${ms(r[4])} |`)
  }
  console.log(`| runtime per call | | | | ${ms(callOverhead)} | ${ms(callOverhead)} |`)
  console.log(`| **total** | | ${gflop.toFixed(3)} | | **${ms(total[1])}** | **${ms(total[4])}** |`)
}
