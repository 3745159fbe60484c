#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Estimates flexpipe's latency on a Raspberry Pi 5 (4x Cortex-A76, 2.4 GHz) for MobileNetV2 and ResNet-50
// from the cycle counts of the NEON kernels each layer runs (docs/benchmarks/raspberry-pi-5-estimate.md
// derives every constant below). An estimate, not a measurement: nothing runs on arm64 here.
//   node scripts/bench/pi5-estimate.mjs            (needs dist/ and .cache/zoo-models/{mobilenet_v2,resnet50}.onnx)
//   node scripts/bench/pi5-estimate.mjs --layers   (also one line per layer)
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const load = async (m) => import(pathToFileURL(join(root, 'dist/lib', m)).href)
const { loadOnnx } = await load('model/onnx-import.js')
const { fuseGraph, symbolicShapes } = await load('model/fuse-graph.js')
const { inferGraph } = await load('model/infer-graph.js')
const { foldNative } = await load('runtime/fold-native.js')

const hz = 2.4e9
// Cycles per inner-loop step on one A76 core (2 FMA pipes, 2 load/store pipes, 4-wide decode):
const gemm8x12Step = 12.5 // 24 fmla + 1 ld1r on the FP pipes: 25 / 2
const gemmTileExtra = 75 // per 8x12 tile call: zeroing, epilogue (row bias, clamp, residual), call
const narrowCol = 2 // per column and k step: 4 fmla / 2 pipes (+0.5 per group for the spill chain)
const narrowCall = 45, narrowStore = 0.6 // per (panel, group, k block) call; per output element
const wgCall = 80 // Winograd 6x16 tile GEMM: per call (k = C steps of gemm8x12Step)
const wgIn = { 8: 600, 4: 80 }, wgOut = { 8: 600, 4: 60 } // transforms, per (tile, 8 channels), alpha 8 / 4
const dwOut = { 1: 3.0, 2: 4.1 }, dwCopy = 0.15 // depthwise per output; padded copy per input float
const stemFmla = { r6: 35 / 24, rest: 0.7 } // conv_stem_rows: cycles per fmla, 6-channel blocks / the rest
const hiCompute = 1.3 // high end: the x86 1024^3 GEMM reaches 81% of the FMA loop (intel-xeon-avx512.md)
const bw = { 1: [8e9, 6e9], 4: [10e9, 8e9] } // DRAM bytes/s [low estimate, high estimate] (assumed)
const forkJoin = [3e-6, 10e-6] // per parallel region at 4 threads (assumed)
const threadEff = [0.95, 0.8] // of a balanced split at 4 threads; Xeon, 2 threads: 1.73x ResNet-50, 1.51x MobileNetV2
const bigTensor = 1 << 20 // activations from 1 MiB up go to DRAM (L3 2 MiB shared, L2 512 KiB per core)

const cdiv = (a, b) => Math.ceil(a / b)
const prod = (d) => d.reduce((a, b) => a * b, 1)

function gemmCycles(M, K, N) {
  const kb = cdiv(K, 256), kc = cdiv(K, kb), panels = cdiv(N, 12)
  const copyB = K > 64 && M >= 32 ? kb * panels * kc * 3 : 0
  return kb * cdiv(M, 8) * panels * (kc * gemm8x12Step + gemmTileExtra) + copyB
}
function narrowCycles(M, K, N) {
  const groups = cdiv(Math.min(N, 256), 6) * cdiv(N, 256), panels = cdiv(M, 16)
  return panels * K * (narrowCol * N + 0.5 * groups) + panels * groups * cdiv(K, 256) * narrowCall + M * N * narrowStore
}
function winogradCycles(alpha, C, M, H, W) {
  const m = alpha - 2, tiles = cdiv(H, m) * cdiv(W, m), blockMax = Math.floor(2304 / (alpha * alpha))
  let slots = 0
  for (let t = tiles; t > 0; t -= blockMax) slots += cdiv(Math.min(t, blockMax), 6) * 6
  const gemm = alpha * alpha * cdiv(M, 16) * (slots / 6) * (C * gemm8x12Step + wgCall)
  return { cyc: gemm + tiles * (cdiv(C, 8) * wgIn[alpha] + cdiv(M, 8) * wgOut[alpha]), blocks: cdiv(tiles, blockMax) }
}
const dwCycles = (C, OH, OW, s, IH, IW) => C * (OH * OW * dwOut[s] * (cdiv(OW, 4) * 4) / OW + dwCopy * (IH + 2) * (IW + 2))
function stemCycles(C, M, K, OH, OW) {
  const r6 = Math.floor(M / 6) * 6, vec = cdiv(OW, 4)
  return OH * C * K * K * vec * (r6 * stemFmla.r6 + (M - r6) * stemFmla.rest)
}
// Rows of the stem's output the fused ops compute (neighbouring bands recompute their overlap):
// native/runtime/conv_band_rows.h fused_bands.
function bandRows(M, OW, outRows, stride, extent) {
  const target = Math.max(extent, Math.floor((512 * 1024) / (4 * M * OW)))
  const per = Math.max(1, Math.floor((target - extent) / stride) + 1)
  let bands = cdiv(outRows, per)
  if (bands > 1 && bands % 2) bands++
  const rows = cdiv(outRows, bands)
  bands = cdiv(outRows, rows)
  return { bands, mid: bands * ((rows - 1) * stride + extent) }
}

// One entry per kernel class a step runs: cycles at 1 thread, DRAM bytes, work units for 4 threads.
function classify(step) {
  const { node, inputs, outputs } = step
  const y = outputs[0].dims, x = inputs[0]?.dims, w = inputs[1]?.dims
  const act = (d) => (d && prod(d) * 4 >= bigTensor ? prod(d) * 4 : 0)
  const io = act(x) + act(y) + (inputs[3] && node.opType === 'Conv' && !node.attrs.has('_dw.group') ? act(inputs[3].dims) : 0)
  if (node.opType === 'Gemm') return [{ cls: 'FC + pooling', flops: 2 * prod(w), cyc: prod(w) / 6, bytes: prod(w) * 4, units: 1 }]
  if (node.opType !== 'Conv') return [{ cls: 'FC + pooling', flops: 0, cyc: x ? prod(x) * 0.5 : 0, bytes: 0, units: 1 }]
  const algo = step.kernel.op === 'Conv' ? step.kernel.ints.at(-3) : step.kernel.op
  const [M, Cg, KH, KW] = w, g = node.attrs.get('group') ?? 1, C = Cg * g, s = node.attrs.get('strides')?.[0] ?? 1
  const wBytes = prod(w) * 4
  if (step.kernel.op === 'ConvMaxPool') { // ResNet's stem + max pool (conv_pool.h)
    const OW = cdiv(x[3], s), b = bandRows(M, OW, y[2], 2, 3)
    return [{ cls: 'stem 7x7 + max pool (by rows)', flops: 2 * C * KH * KW * M * cdiv(x[2], s) * OW, cyc: stemCycles(C, M, KH, b.mid, OW) + prod(y), bytes: wBytes + io, units: b.bands }]
  }
  if (step.kernel.op === 'ConvDepthwise') { // MobileNetV2's expansions and stem + the depthwise after them
    const MH = cdiv(x[2], s), MW = cdiv(x[3], s), ds = node.attrs.get('_dw.strides')[0]
    const b = bandRows(M, MW, y[2], ds, 3), recompute = b.mid / MH
    const first = KH === 1
      ? { cls: '1x1 GEMM 8x12', flops: 2 * C * M * MH * MW, cyc: gemmCycles(M, C, MW * Math.min(MH, b.mid / b.bands)) * b.bands }
      : { cls: 'stem 3x3 (by rows)', flops: 2 * C * KH * KW * M * MH * MW, cyc: stemCycles(C, M, KH, b.mid, MW) }
    first.bytes = wBytes + io, first.units = b.bands
    const dw = { cls: 'depthwise 3x3', flops: 2 * 9 * prod(y), cyc: dwCycles(M, y[2], y[3], ds, MH * recompute, MW), bytes: 0, units: b.bands }
    return [first, dw]
  }
  const OH = y[2], OW = y[3], P = OH * OW, flops = 2 * Cg * KH * KW * M * P
  switch (algo) {
    case 5: return [{ cls: 'depthwise 3x3', flops, cyc: dwCycles(C, OH, OW, s, x[2], x[3]), bytes: wBytes + io, units: C }]
    case 2: return [{ cls: '1x1 GEMM 8x12', flops, cyc: gemmCycles(M, C, P), bytes: wBytes + io, units: cdiv(M, 8) * cdiv(P, 12) }]
    case 1: return [{ cls: 'im2col + GEMM 8x12', flops, cyc: gemmCycles(M, C * KH * KW, P) + C * KH * KW * P * 0.25, bytes: wBytes + io, units: cdiv(M, 8) * cdiv(P, 12) }]
    case 6: { // phase planes (not a 1x1 stride 1): OH rows of OW + (KW - 1) / s virtual columns, copied input
      const inPlace = KH === 1 && s === 1, cols = inPlace ? P : OH * (OW + Math.floor((KW - 1) / s))
      const fill = inPlace ? 0 : 0.25 * prod(x)
      return [{ cls: 'narrow GEMM 16xN', flops, cyc: narrowCycles(M, C * KH * KW, cols) + fill, bytes: cdiv(M, 16) * 16 * C * KH * KW * 4 + io, units: cdiv(M, 16), regions: fill ? 2 : 1 }]
    }
    case 3: case 4: {
      const a = algo === 3 ? 8 : 4, r = winogradCycles(a, C, M, OH, OW), u = a * a * cdiv(M, 16) * 16 * C * 4
      return [{ cls: `Winograd F(${a - 2},3)`, flops, cyc: r.cyc, bytes: u + io, bytesHigh: u * r.blocks + io, units: cdiv(M, 16) * 4, regions: 2 * r.blocks }]
    }
    default: throw new Error(`${node.name}: algorithm ${algo} is not modelled`)
  }
}

// Seconds of one entry at `threads`, [low, high]: compute and DRAM overlap fully (low) or not at all (high).
function seconds(e, threads) {
  const balance = Math.min(1, e.units / (threads * cdiv(e.units, threads)))
  const eff = threads === 1 ? [1, 1] : threadEff.map((f) => f * balance)
  const regions = threads === 1 ? 0 : (e.regions ?? 1)
  const c = [e.cyc / hz / (threads * eff[0]), (e.cyc * hiCompute) / hz / (threads * eff[1])]
  const m = [e.bytes / bw[threads][0], (e.bytesHigh ?? e.bytes) / bw[threads][1]]
  return [Math.max(c[0], m[0]) + regions * forkJoin[0], c[1] + m[1] + regions * forkJoin[1]]
}

const showLayers = process.argv.includes('--layers')
for (const name of ['mobilenet_v2', 'resnet50']) {
  const src = await loadOnnx(join(root, '.cache/zoo-models', `${name}.onnx`))
  const inputs = new Map([[src.inputs[0].name, { dtype: 'float32', dims: [1, 3, 224, 224] }]])
  const cache = new Map()
  const { graph } = fuseGraph(src, inputs, symbolicShapes(inputs, foldNative, cache))
  const steps = inferGraph(graph, inputs, { concrete: true, fold: foldNative, foldCache: cache }).steps.filter((s) => s.kernel)
  const byClass = new Map(), total = { 1: [0, 0], 4: [0, 0] }
  let flops = 0
  for (const step of steps) {
    for (const e of classify(step)) {
      const row = byClass.get(e.cls) ?? { flops: 0, 1: [0, 0], 4: [0, 0], mb: 0 }
      row.flops += e.flops, row.mb += e.bytes / 1e6, flops += e.flops
      for (const t of [1, 4]) seconds(e, t).forEach((v, i) => ((row[t][i] += v), (total[t][i] += v)))
      byClass.set(e.cls, row)
      if (showLayers) console.log(`  ${step.node.name} ${e.cls} ${(e.flops / 1e6).toFixed(1)} MFLOP ${(e.cyc / e.flops).toFixed(3)} cycles/FLOP ${seconds(e, 1).map((v) => (v * 1e3).toFixed(2)).join('-')} ms`)
    }
  }
  const ms = (v) => `${(v[0] * 1e3).toFixed(1)}-${(v[1] * 1e3).toFixed(1)}`
  console.log(`${name}: ${(flops / 1e9).toFixed(2)} GFLOP (direct count)`)
  console.log('| layer class | GFLOP | DRAM MB | 1 thread ms | 4 threads ms |\n|---|---|---|---|---|')
  for (const [cls, r] of byClass) console.log(`| ${cls} | ${(r.flops / 1e9).toFixed(3)} | ${r.mb.toFixed(1)} | ${ms(r[1])} | ${ms(r[4])} |`)
  console.log(`| total | ${(flops / 1e9).toFixed(3)} | | ${ms(total[1])} | ${ms(total[4])} |\n`)
}
