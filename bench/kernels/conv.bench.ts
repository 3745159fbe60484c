// SPDX-License-Identifier: Apache-2.0
// Convolution kernels (issue 3): GFLOP/s and workspace bytes of every algorithm on representative layers,
// 1 and 2 threads, through the real Conv op (binding.runOp with the prepacked Winograd filter and the
// workspace buffer the plan would give it), on the ISA the addon selects (FLEXPIPE_ISA=ref for scalar).
//
//   npm run bench:kernels                  (GEMM, then this)
//   node dist/bench/kernels/conv.bench.js --runs 20 --threads 1,2 --layers resnet,vgg
//   node dist/bench/kernels/conv.bench.js --layers dw-s2 --kernels depthwise --runs 2000   (one kernel, e.g. under perf)
//
// GFLOP/s is direct-convolution FLOPs (2 N M K pixels) per second, the convention for comparing Winograd
// with GEMM-based convolution (NNPACK's "effective" rate); algo_gflops counts the algorithm's own FLOPs
// (lib/model/ops/conv-cost.ts). Workspace bytes are the native conv_cost for the threads used. Each case is
// warmed up, then timed `runs` times (fewer, at least 5, for cases slower than 0.4 s); the median is
// reported. Prints a table and one JSON line per case; writes bench/results/kernels-conv.json.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { chooseConvKernel, convWeightTransform, defaultConvSlices } from '../../lib/model/ops/nn-conv.js'
import { convAlgoCode, convCost, type ConvKernel, type ConvShape } from '../../lib/model/ops/conv-cost.js'

const self = fileURLToPath(import.meta.url)
const repoRoot = join(dirname(self), '..', '..', '..')

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return (i >= 0 ? process.argv[i + 1] : undefined) ?? fallback
}

function conv2d(c: number, m: number, hw: number, k: number, stride = 1, group = 1, pad = Math.floor(k / 2)): ConvShape {
  const out = Math.floor((hw + 2 * pad - k) / stride) + 1
  return {
    batch: 1, inChannels: c, outChannels: m, group, in: [1, hw, hw], out: [1, out, out], kernel: [1, k, k],
    stride: [1, stride, stride], dilation: [1, 1, 1], pad: [0, pad, pad],
  }
}

interface Layer {
  id: string
  name: string
  shape: ConvShape
  kernels: ConvKernel[]
}

const layers: Layer[] = [
  { id: 'resnet', name: 'ResNet 3x3 64->64 56x56', shape: conv2d(64, 64, 56, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'im2col', 'narrow', 'direct'] },
  { id: 'resnet14', name: '3x3 256->256 14x14', shape: conv2d(256, 256, 14, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'im2col', 'narrow', 'direct'] },
  { id: 'resnet7', name: 'ResNet 3x3 512->512 7x7', shape: conv2d(512, 512, 7, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'im2col', 'narrow', 'direct'] },
  { id: 'resnet7s2', name: 'ResNet 3x3 s2 256->256 28x28', shape: conv2d(256, 256, 28, 3, 2), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'down7', name: 'ResNet 1x1 s2 1024->2048 14x14', shape: conv2d(1024, 2048, 14, 1, 2, 1, 0), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'pointwise', name: '1x1 256->64 56x56', shape: conv2d(256, 64, 56, 1), kernels: ['gemm1x1', 'narrow', 'im2col', 'direct'] },
  { id: 'pw56e', name: 'ResNet 1x1 64->256 56x56', shape: conv2d(64, 256, 56, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'vgg', name: 'VGG 3x3 128->128 112x112', shape: conv2d(128, 128, 112, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'im2col', 'narrow', 'direct'] },
  { id: 'rgx7', name: 'RegNetX-400MF 3x3 400ch g25 7x7', shape: conv2d(400, 400, 7, 3, 1, 25), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgx56s2', name: 'RegNetX-400MF 3x3 s2 32ch g2 112x112', shape: conv2d(32, 32, 112, 3, 2, 2), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgxp112', name: 'RegNetX-400MF 1x1 s2 32->32 112x112 (proj)', shape: conv2d(32, 32, 112, 1, 2, 1, 0), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'rgxp14', name: 'RegNetX-400MF 1x1 s2 160->400 14x14 (proj)', shape: conv2d(160, 400, 14, 1, 2, 1, 0), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'rgx56', name: 'RegNetX-400MF 3x3 32ch g2 56x56', shape: conv2d(32, 32, 56, 3, 1, 2), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgx28', name: 'RegNetX-400MF 3x3 64ch g4 28x28', shape: conv2d(64, 64, 28, 3, 1, 4), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgx14', name: 'RegNetX-400MF 3x3 160ch g10 14x14', shape: conv2d(160, 160, 14, 3, 1, 10), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgy14', name: 'RegNetY-400MF 3x3 208ch g26 14x14', shape: conv2d(208, 208, 14, 3, 1, 26), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgx14s2', name: 'RegNetX-400MF 3x3 s2 400ch g25 14x14', shape: conv2d(400, 400, 14, 3, 2, 25), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgx28s2', name: 'RegNetX-400MF 3x3 s2 160ch g10 28x28', shape: conv2d(160, 160, 28, 3, 2, 10), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgx56s2b', name: 'RegNetX-400MF 3x3 s2 64ch g4 56x56', shape: conv2d(64, 64, 56, 3, 2, 4), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rgxpw7', name: 'RegNetX-400MF 1x1 400->400 7x7', shape: conv2d(400, 400, 7, 1), kernels: ['gemm1x1', 'narrow'] },
  { id: 'rgxpw14', name: 'RegNetX-400MF 1x1 160->160 14x14', shape: conv2d(160, 160, 14, 1), kernels: ['gemm1x1', 'narrow'] },
  { id: 'rgy14', name: 'RegNetY-400MF 3x3 208ch g26 14x14', shape: conv2d(208, 208, 14, 3, 1, 26), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rnx56', name: 'ResNeXt-50 3x3 128ch g32 56x56', shape: conv2d(128, 128, 56, 3, 1, 32), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'rnx7', name: 'ResNeXt-50 3x3 1024ch g32 7x7', shape: conv2d(1024, 1024, 7, 3, 1, 32), kernels: ['grouped', 'im2col', 'direct'] },
  { id: 'dw5x112', name: 'EfficientNet-B0 dw 5x5 s2 144ch 56x56', shape: conv2d(144, 144, 56, 5, 2, 144), kernels: ['depthwise', 'direct'] },
  { id: 'dw5x28', name: 'EfficientNet-B0 dw 5x5 s1 240ch 28x28', shape: conv2d(240, 240, 28, 5, 1, 240), kernels: ['depthwise', 'direct'] },
  { id: 'dw5x14', name: 'EfficientNet-B0 dw 5x5 s1 672ch 14x14', shape: conv2d(672, 672, 14, 5, 1, 672), kernels: ['depthwise', 'direct'] },
  { id: 'dw5x7', name: 'EfficientNet-B0 dw 5x5 s1 1152ch 7x7', shape: conv2d(1152, 1152, 7, 5, 1, 1152), kernels: ['depthwise', 'direct'] },
  { id: 'dw5mn56', name: 'MnasNet0.5 dw 5x5 s2 48ch 56x56', shape: conv2d(48, 48, 56, 5, 2, 48), kernels: ['depthwise', 'direct'] },
  { id: 'dw5mn28', name: 'MnasNet0.5 dw 5x5 s1 72ch 28x28', shape: conv2d(72, 72, 28, 5, 1, 72), kernels: ['depthwise', 'direct'] },
  { id: 'dw5mn28s2', name: 'MnasNet0.5 dw 5x5 s2 72ch 28x28', shape: conv2d(72, 72, 28, 5, 2, 72), kernels: ['depthwise', 'direct'] },
  { id: 'dw5mn14', name: 'MnasNet0.5 dw 5x5 s1 240ch 14x14', shape: conv2d(240, 240, 14, 5, 1, 240), kernels: ['depthwise', 'direct'] },
  { id: 'dw5mn14s2', name: 'MnasNet0.5 dw 5x5 s2 288ch 14x14', shape: conv2d(288, 288, 14, 5, 2, 288), kernels: ['depthwise', 'direct'] },
  { id: 'dw7cnx56', name: 'ConvNeXt-T dw 7x7 96ch 56x56', shape: conv2d(96, 96, 56, 7, 1, 96), kernels: ['depthwise'] },
  { id: 'dw7cnx14', name: 'ConvNeXt-T dw 7x7 384ch 14x14', shape: conv2d(384, 384, 14, 7, 1, 384), kernels: ['depthwise'] },
  { id: 'dw7cnx7', name: 'ConvNeXt-T dw 7x7 768ch 7x7', shape: conv2d(768, 768, 7, 7, 1, 768), kernels: ['depthwise'] },
  { id: 'dw3mn112', name: 'MnasNet0.5 dw 3x3 s1 16ch 112x112', shape: conv2d(16, 16, 112, 3, 1, 16), kernels: ['depthwise'] },
  { id: 'pwmn28', name: 'MnasNet0.5 1x1 24->72 28x28', shape: conv2d(24, 72, 28, 1), kernels: ['gemm1x1', 'narrow'] },
  { id: 'pwmn28b', name: 'MnasNet0.5 1x1 72->24 28x28', shape: conv2d(72, 24, 28, 1), kernels: ['gemm1x1', 'narrow'] },
  { id: 'sqz55', name: 'SqueezeNet1.1 squeeze 1x1 64->16 55x55', shape: conv2d(64, 16, 55, 1), kernels: ['gemm1x1', 'narrow', 'im2col'] },
  { id: 'sqz55b', name: 'SqueezeNet1.1 squeeze 1x1 128->16 55x55', shape: conv2d(128, 16, 55, 1), kernels: ['gemm1x1', 'narrow', 'im2col'] },
  { id: 'sq55', name: 'SqueezeNet1.1 expand 3x3 16->64 55x55', shape: conv2d(16, 64, 55, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'narrow', 'im2col'] },
  { id: 'sq13', name: 'SqueezeNet1.1 expand 3x3 64->256 13x13', shape: conv2d(64, 256, 13, 3), kernels: ['winograd63', 'winograd23', 'winograd23_lean', 'narrow', 'im2col'] },
  { id: 'sq27', name: 'SqueezeNet1.1 expand 3x3 32->128 27x27', shape: conv2d(32, 128, 27, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'narrow', 'im2col'] },
  { id: 'sq13b', name: 'SqueezeNet1.1 expand 3x3 48->192 13x13', shape: conv2d(48, 192, 13, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'narrow'] },
  { id: 'gn28', name: 'GoogLeNet 3x3 16->32 28x28', shape: conv2d(16, 32, 28, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'narrow'] },
  { id: 'gn14', name: 'GoogLeNet 3x3 16->48 14x14', shape: conv2d(16, 48, 14, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'narrow'] },
  { id: 'gn7', name: 'GoogLeNet 3x3 48->128 7x7', shape: conv2d(48, 128, 7, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'narrow'] },
  { id: 'gn56', name: '3x3 8->16 56x56', shape: conv2d(8, 16, 56, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'narrow'] },
  { id: 'c64x14', name: '3x3 64->64 14x14', shape: conv2d(64, 64, 14, 3), kernels: ['winograd63', 'winograd23', 'winograd63_lean', 'winograd23_lean', 'narrow'] },
  { id: 'dw-s1', name: 'MobileNetV2 dw 3x3 s1 144ch 56x56', shape: conv2d(144, 144, 56, 3, 1, 144), kernels: ['depthwise', 'im2col', 'direct'] },
  { id: 'dw-s2', name: 'MobileNetV2 dw 3x3 s2 144ch 56x56', shape: conv2d(144, 144, 56, 3, 2, 144), kernels: ['depthwise', 'im2col', 'direct'] },
  { id: 'dw14', name: 'MobileNetV2 dw 3x3 s1 384ch 14x14', shape: conv2d(384, 384, 14, 3, 1, 384), kernels: ['depthwise', 'direct'] },
  { id: 'dw7', name: 'MobileNetV2 dw 3x3 s1 960ch 7x7', shape: conv2d(960, 960, 7, 3, 1, 960), kernels: ['depthwise', 'direct'] },
  { id: 'dw14b', name: 'MobileNetV2 dw 3x3 s1 576ch 14x14', shape: conv2d(576, 576, 14, 3, 1, 576), kernels: ['depthwise', 'direct'] },
  { id: 'dw14s2', name: 'MobileNetV2 dw 3x3 s2 576ch 14x14', shape: conv2d(576, 576, 14, 3, 2, 576), kernels: ['depthwise', 'direct'] },
  { id: 'pw56', name: 'MobileNetV2 1x1 144->24 56x56', shape: conv2d(144, 24, 56, 1), kernels: ['gemm1x1', 'direct'] },
  { id: 'pw14', name: 'MobileNetV2 1x1 64->384 14x14', shape: conv2d(64, 384, 14, 1), kernels: ['gemm1x1', 'direct'] },
  { id: 'pw14p', name: 'MobileNetV2 1x1 384->64 14x14', shape: conv2d(384, 64, 14, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw14q', name: 'MobileNetV2 1x1 576->96 14x14', shape: conv2d(576, 96, 14, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw7', name: 'MobileNetV2 1x1 960->160 7x7', shape: conv2d(960, 160, 7, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw7w', name: 'MobileNetV2 1x1 320->1280 7x7', shape: conv2d(320, 1280, 7, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw112', name: 'MobileNetV2 1x1 16->96 112x112', shape: conv2d(16, 96, 112, 1), kernels: ['gemm1x1', 'direct'] },
  { id: 'pw112n', name: 'MobileNetV2 1x1 32->16 112x112', shape: conv2d(32, 16, 112, 1), kernels: ['gemm1x1', 'direct'] },
  { id: 'sqcls', name: 'SqueezeNet classifier 1x1 512->1000 13x13', shape: conv2d(512, 1000, 13, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw14r', name: 'ResNet 1x1 1024->256 14x14', shape: conv2d(1024, 256, 14, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw7r', name: 'ResNet 1x1 2048->512 7x7', shape: conv2d(2048, 512, 7, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'down28', name: 'ResNet 1x1 s2 256->512 56x56', shape: conv2d(256, 512, 56, 1, 2, 1, 0), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'down14', name: 'ResNet 1x1 s2 512->1024 28x28', shape: conv2d(512, 1024, 28, 1, 2, 1, 0), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'resnet28s2', name: 'ResNet 3x3 s2 128->128 56x56', shape: conv2d(128, 128, 56, 3, 2), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'pw28e', name: 'ResNet 1x1 128->512 28x28', shape: conv2d(128, 512, 28, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw14e', name: 'ResNet 1x1 256->1024 14x14', shape: conv2d(256, 1024, 14, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'pw28r', name: 'ResNet 1x1 512->128 28x28', shape: conv2d(512, 128, 28, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'sqs13', name: 'SqueezeNet squeeze 1x1 512->64 13x13', shape: conv2d(512, 64, 13, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'sqe1c', name: 'SqueezeNet expand 1x1 64->256 13x13', shape: conv2d(64, 256, 13, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'sqe1b', name: 'SqueezeNet expand 1x1 32->128 27x27', shape: conv2d(32, 128, 27, 1), kernels: ['gemm1x1', 'narrow', 'direct'] },
  { id: 'stem', name: 'MobileNetV2 stem 3x3 s2 3->32 224x224', shape: conv2d(3, 32, 224, 3, 2), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'sqe3', name: 'SqueezeNet expand 3x3 16->64 55x55', shape: conv2d(16, 64, 55, 3), kernels: ['winograd63', 'winograd23', 'im2col', 'narrow', 'direct'] },
  { id: 'sqe3b', name: 'SqueezeNet expand 3x3 32->128 27x27', shape: conv2d(32, 128, 27, 3), kernels: ['winograd63', 'winograd23', 'im2col', 'narrow', 'direct'] },
  { id: 'sqe3c', name: 'SqueezeNet expand 3x3 64->256 13x13', shape: conv2d(64, 256, 13, 3), kernels: ['winograd63', 'winograd23', 'im2col', 'narrow', 'direct'] },
  { id: 'stemsq', name: 'SqueezeNet stem 3x3 s2 3->64 224x224 (no padding)', shape: conv2d(3, 64, 224, 3, 2, 1, 0), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'stem7', name: 'ResNet stem 7x7 s2 3->64 224x224', shape: conv2d(3, 64, 224, 7, 2), kernels: ['im2col', 'narrow', 'direct'] },
  { id: 'ppocr', name: 'PP-OCR det conv1 3x3 s2 3->16 640x640', shape: conv2d(3, 16, 640, 3, 2), kernels: ['im2col', 'narrow', 'direct'] },
]

const native = binding()
const testing = native._testing as unknown as { convCost(isa: string, k: string, s: object, slices: number, threads: number): { workspaceBytes: number } }
const f32 = (dims: number[], data: Float32Array): NativeTensor => ({ dtype: 1, dims, data })

function random(n: number, seed: number): Float32Array {
  const rand = seededRandom(seed)
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) out[i] = rand() * 2 - 1
  return out
}

function nativeShape(s: ConvShape) {
  return { n: s.batch, c: s.inChannels, m: s.outChannels, group: s.group, h: s.in[1], w: s.in[2], oh: s.out[1], ow: s.out[2], kh: s.kernel[1], kw: s.kernel[2], sh: s.stride[1], sw: s.stride[2], pt: s.pad[1], pl: s.pad[2] }
}

/** A ready-to-run Conv call: inputs (filter transformed for Winograd, in panels for narrow, packed by group for grouped), outputs with the workspace, ints. */
function prepare(s: ConvShape, kernel: ConvKernel, slices: number, wsBytes: number) {
  const cg = s.inChannels / s.group
  const [kh, kw] = [s.kernel[1], s.kernel[2]]
  let w = f32([s.outChannels, cg, kh, kw], random(s.outChannels * cg * kh * kw, 2))
  const transform = convWeightTransform(kernel)
  if (transform !== undefined) {
    const r = native.prepack(transform, w, kernel === 'grouped' ? [s.group] : [])
    w = f32(r.dims, new Float32Array(r.data))
  }
  const inputs = [f32([s.batch, s.inChannels, s.in[1], s.in[2]], random(s.batch * s.inChannels * s.in[1] * s.in[2], 1)), w, f32([s.outChannels], random(s.outChannels, 3))]
  const y = new Float32Array(s.batch * s.outChannels * s.out[1] * s.out[2])
  const outputs: NativeTensor[] = [f32([s.batch, s.outChannels, s.out[1], s.out[2]], y)]
  if (wsBytes > 0) outputs.push({ dtype: 2, dims: [wsBytes], data: new Uint8Array(wsBytes) })
  const padEnd = (i: 1 | 2) => Math.max(0, (s.out[i] - 1) * s.stride[i] + s.kernel[i] - s.in[i] - s.pad[i])
  const ints = [s.group, 2, kh, kw, s.stride[1], s.stride[2], 1, 1, s.pad[1], s.pad[2], padEnd(1), padEnd(2), convAlgoCode[kernel], slices, 0]
  return { inputs, outputs, ints, y }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

function timeCall(fn: () => void, runs: number): { p50: number; n: number } {
  fn()
  const t0 = process.hrtime.bigint()
  fn()
  const first = Number(process.hrtime.bigint() - t0) / 1e6
  const n = first > 400 ? 5 : runs
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const a = process.hrtime.bigint()
    fn()
    times.push(Number(process.hrtime.bigint() - a) / 1e6)
  }
  return { p50: median(times), n }
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (m) return m[1]!.trim()
  } catch {
    /* not Linux */
  }
  return cpus()[0]?.model ?? 'unknown'
}

function main(): void {
  const runs = Number(option('runs', '20'))
  const threadList = option('threads', '1,2').split(',').map(Number)
  const only = option('layers', '').split(',').filter((x) => x !== '')
  const onlyKernels = option('kernels', '').split(',').filter((x) => x !== '')
  const isa = native.info().isa
  const rows: Array<Record<string, unknown>> = []
  for (const layer of layers.filter((l) => only.length === 0 || only.includes(l.id))) {
    const s = layer.shape
    const directFlops = convCost('direct', s, 1).flops
    const chosen = chooseConvKernel(s, true)
    for (const threads of threadList) {
      let reference: Float32Array | undefined
      for (const kernel of layer.kernels.filter((k) => onlyKernels.length === 0 || onlyKernels.includes(k))) {
        const slices = defaultConvSlices(kernel, s)
        const wsBytes = testing.convCost(isa, kernel, nativeShape(s), slices, threads).workspaceBytes
        const call = prepare(s, kernel, slices, wsBytes)
        const { p50, n } = timeCall(() => native.runOp('Conv', call.inputs, call.outputs, call.ints, [], threads), runs)
        reference ??= call.y.slice()
        let diff = 0
        for (let i = 0; i < call.y.length; i++) diff = Math.max(diff, Math.abs(call.y[i]! - reference[i]!))
        const row = {
          layer: layer.name, kernel, chosen: kernel === chosen, isa, threads, slices, runs: n, p50_ms: +p50.toFixed(3),
          gflops: +(directFlops / p50 / 1e6).toFixed(2), algo_gflops: +(convCost(kernel, s, slices).flops / p50 / 1e6).toFixed(2),
          workspace_bytes: wsBytes, weight_bytes: convCost(kernel, s, slices).weightBytes, max_abs_diff_vs_first: +diff.toExponential(2),
        }
        rows.push(row)
        console.log(JSON.stringify({ kernel: `conv_${kernel}`, isa, shape: layer.name, threads, p50_ms: row.p50_ms, gflops: row.gflops, cpu: cpuModel() }))
      }
    }
  }
  console.log()
  console.table(rows.map((r) => ({ layer: r.layer, kernel: `${r.kernel}${r.chosen ? ' *' : ''}`, thr: r.threads, ms: r.p50_ms, 'GFLOP/s': r.gflops, 'algo GFLOP/s': r.algo_gflops, 'workspace B': r.workspace_bytes })))
  console.log('* = the default choice of lib/model/ops/nn-conv.ts; GFLOP/s = direct-convolution FLOPs / median time')
  const machine = { cpu: cpuModel(), cores: cpus().length, availableParallelism: availableParallelism(), loadavg: loadavg(), platform: `${process.platform}-${process.arch}`, omp_wait_policy: process.env.OMP_WAIT_POLICY }
  const out = join(repoRoot, 'bench', 'results', 'kernels-conv.json')
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, JSON.stringify({ machine, isa, runs, statistic: 'median of runs after 2 warm-up calls (5 runs for cases over 0.4 s)', gflops: 'direct-convolution FLOPs (2 N M K pixels) / median time', results: rows }, null, 2) + '\n')
  console.log(`wrote ${out}`)
}

// OpenMP reads OMP_WAIT_POLICY at start-up: re-run with active waiting unless the caller chose one.
if (process.env.OMP_WAIT_POLICY === undefined) {
  const r = spawnSync(process.execPath, [self, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, OMP_WAIT_POLICY: 'active' } })
  process.exitCode = r.status ?? 1
} else {
  main()
}
