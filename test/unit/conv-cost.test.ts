// SPDX-License-Identifier: Apache-2.0
// Properties of the convolution cost model (lib/model/ops/conv-cost.ts) and of the default algorithm choice
// (lib/model/ops/nn-conv.ts), without the addon: which algorithms apply, that slices shrink workspaces,
// that the default (ISA bound) workspace covers every ISA's blocking, the Winograd tile arithmetic and
// weight sizes, and the choice on representative layers. test/kernels/conv-cost.test.ts checks the same
// numbers against the native cost model.
import t from 'tap'
import { chooseConvKernel, defaultConvSlices } from '../../lib/model/ops/nn-conv.js'
import { convApplies, convCost, groupedGeometry, narrowGeometry, tapsGeometry, winogradGeometry, type ConvKernel, type ConvShape, type GemmBlocking } from '../../lib/model/ops/conv-cost.js'

function conv2d(c: number, m: number, hw: number, k: number, opts: { stride?: number; group?: number; batch?: number; pad?: number; dilation?: number } = {}): ConvShape {
  const stride = opts.stride ?? 1
  const d = opts.dilation ?? 1
  const pad = opts.pad ?? Math.floor(((k - 1) * d + 1) / 2)
  const out = Math.floor((hw + 2 * pad - ((k - 1) * d + 1)) / stride) + 1
  return {
    batch: opts.batch ?? 1, inChannels: c, outChannels: m, group: opts.group ?? 1,
    in: [1, hw, hw], out: [1, out, out], kernel: [1, k, k], stride: [1, stride, stride], dilation: [1, d, d], pad: [0, pad, pad],
  }
}

const resnet = conv2d(64, 64, 56, 3)
const kernels: ConvKernel[] = ['direct', 'im2col', 'gemm1x1', 'winograd63', 'winograd23', 'depthwise']
const withGrouped: ConvKernel[] = [...kernels, 'grouped']
// The blockings of runtime/dispatch_gemm.cc (ref, avx2, neon, avx512) when this was written; the native
// test (test/kernels/conv-cost.test.ts) reads the live ones.
const blockings: GemmBlocking[] = [
  { mr: 4, nr: 8, mc: 128, kc: 256 },
  { mr: 6, nr: 16, mc: 144, kc: 768 },
  { mr: 8, nr: 12, mc: 128, kc: 256 },
  { mr: 8, nr: 16, mc: 144, kc: 256, tilePanels: 2 },
]

t.test('which algorithms apply', async (t) => {
  t.strictSame(kernels.filter((k) => convApplies(k, resnet)), ['direct', 'im2col', 'winograd63', 'winograd23'])
  t.strictSame(kernels.filter((k) => convApplies(k, conv2d(256, 64, 56, 1))), ['direct', 'im2col', 'gemm1x1'])
  t.strictSame(kernels.filter((k) => convApplies(k, conv2d(144, 144, 56, 3, { group: 144, stride: 2 }))), ['direct', 'im2col', 'depthwise'])
  t.strictSame(kernels.filter((k) => convApplies(k, conv2d(64, 64, 56, 3, { stride: 2 }))), ['direct', 'im2col'])
  t.strictSame(kernels.filter((k) => convApplies(k, conv2d(64, 64, 56, 1, { stride: 2 }))), ['direct', 'im2col'])
  t.strictSame(withGrouped.filter((k) => convApplies(k, conv2d(64, 64, 56, 3, { group: 4, stride: 2 }))), ['direct', 'im2col', 'grouped'])
  t.strictSame(withGrouped.filter((k) => convApplies(k, conv2d(144, 144, 56, 3, { group: 144, dilation: 2 }))), ['direct', 'im2col', 'depthwise', 'grouped'])
  t.notOk(convApplies('grouped', conv2d(64, 64, 56, 3)), 'group 1 is not grouped')
  t.notOk(convApplies('grouped', conv2d(64, 64, 56, 3, { group: 4, stride: 3 })), 'stride 3')
})

t.test("the grouped kernel's bands and scratch", async (t) => {
  // RegNetX-400MF's 3x3 at 7x7, 25 groups of 16: one band of 7 rows; 16 x 9 rows of 32 columns (7 + 2
  // padded to 16 lanes, 16 + 2 rounded up to 32), plus one row, after the 144 taps' int64 offsets
  t.same(groupedGeometry(conv2d(400, 400, 7, 3, { group: 25 })), { bandRows: 7, bands: 1, scratchFloats: 2 * 144 + (16 * 9 + 1) * 32 })
  // 2 groups whose rows would fit one band: each plane is cut into 4 bands so that 8 items share the threads
  t.same(groupedGeometry(conv2d(16, 16, 28, 3, { group: 2 })).bands, 4)
  // stride 2 from 112 columns: halves of 64 (56 outputs + 1), 3 output rows read 7 input rows of 16 x 128
  t.equal(groupedGeometry(conv2d(32, 32, 112, 3, { group: 2, stride: 2 })).bandRows, 3)
  // 112 + 2 columns of 16 channels: 7 KiB a row, so a band reads about 64 KiB of rows
  const g = groupedGeometry(conv2d(64, 64, 112, 3, { group: 4 }))
  t.equal(g.bandRows, 6, '8 rows of 128 columns fill the 16384-float target')
  t.equal(convCost('grouped', conv2d(64, 64, 112, 3, { group: 4 }), 1, { threads: 2 }).workspaceBytes, 64 + 2 * Math.ceil((4 * g.scratchFloats) / 64) * 64)
})

t.test('slices shrink the workspace and leave FLOPs alone', async (t) => {
  for (const [kernel, s] of [['im2col', conv2d(128, 128, 112, 3)], ['gemm1x1', conv2d(256, 64, 56, 1)], ['winograd63', resnet], ['winograd23', resnet]] as const) {
    let last = Infinity
    for (const slices of [1, 2, 4, 16, 64, 4096]) {
      const c = convCost(kernel, s, slices)
      t.ok(c.workspaceBytes <= last, `${kernel}: ${slices} slices need ${c.workspaceBytes} <= ${last} bytes`)
      t.equal(c.flops, convCost(kernel, s, 1).flops, `${kernel}: FLOPs do not depend on slices`)
      last = c.workspaceBytes
    }
  }
  // im2col: one slice holds the whole column matrix (K x pixels), 64 slices about 1/64 of it.
  const whole = 4 * 128 * 9 * 112 * 112
  const one = convCost('im2col', conv2d(128, 128, 112, 3), 1, { gemm: blockings[1] }).workspaceBytes
  t.ok(one >= whole && one < whole * 1.05, `im2col with 1 slice: ${one} bytes ~ ${whole}`)
  const sliced = convCost('im2col', conv2d(128, 128, 112, 3), 64, { gemm: blockings[1] }).workspaceBytes
  t.ok(sliced < whole / 32, `im2col with 64 slices: ${sliced} bytes`)
})

t.test('the default workspace bounds every ISA blocking', async (t) => {
  for (const s of [resnet, conv2d(3, 16, 33, 3, { stride: 2 }), conv2d(256, 256, 14, 3), conv2d(12, 8, 7, 1, { group: 4 }), conv2d(256, 64, 56, 1)]) {
    for (const kernel of kernels) {
      if (!convApplies(kernel, s)) continue
      for (const slices of [1, 3, 50]) {
        for (const threads of [1, 8]) {
          const bound = convCost(kernel, s, slices, { threads }).workspaceBytes
          for (const g of blockings) t.ok(convCost(kernel, s, slices, { threads, gemm: g }).workspaceBytes <= bound, `${kernel} ${JSON.stringify(g)}`)
        }
      }
    }
  }
})

t.test('winograd geometry, FLOPs and transformed weights', async (t) => {
  const g63 = winogradGeometry('winograd63', resnet, 1)
  t.equal(g63.tiles, 100, '56x56 output: 10 x 10 tiles of 6x6')
  t.equal(g63.block, 36, 'blocks of at most 2304 / 64 tiles')
  t.equal(winogradGeometry('winograd23', resnet, 1).block, 144)
  t.equal(winogradGeometry('winograd63', resnet, 10).block, 10, 'slices shrink the tile block')
  t.equal(convCost('winograd63', resnet, 1).weightBytes, 4 * 64 * 4 * 64 * 16, 'U is [64][ceil(M/16)][C][16]')
  t.equal(convCost('winograd23', conv2d(8, 20, 8, 3), 1).weightBytes, 4 * 16 * 2 * 8 * 16)
  const direct = convCost('direct', resnet, 1).flops
  t.equal(direct, 2 * 64 * 64 * 9 * 56 * 56)
  t.ok(convCost('winograd63', resnet, 1).flops < direct / 3, 'F(6,3) saves more than 3x the FLOPs on ResNet 3x3 64->64')
  t.ok(convCost('winograd23', resnet, 1).flops < direct / 2, 'F(2,3) saves more than 2x')
  t.equal(convCost('winograd63', resnet, 1, { threads: 2 }).workspaceBytes - convCost('winograd63', resnet, 1).workspaceBytes, 4 * 36 * 64 * 16, 'each thread adds one Mw buffer')
})

t.test('default algorithm choice on representative layers', async (t) => {
  t.equal(chooseConvKernel(resnet, true), 'winograd63', 'ResNet 3x3 64->64 at 56x56')
  t.equal(chooseConvKernel(resnet, false), 'im2col', 'no Winograd without a constant weight')
  t.equal(chooseConvKernel(conv2d(256, 256, 14, 3), true), 'winograd23', 'small images: F(2,3)')
  t.equal(chooseConvKernel(conv2d(256, 64, 56, 1), true), 'gemm1x1')
  t.equal(chooseConvKernel(conv2d(144, 144, 56, 3, { group: 144 }), true), 'depthwise')
  t.equal(chooseConvKernel(conv2d(3, 32, 224, 3, { stride: 2 }), true), 'im2col', 'a first layer')
  t.equal(chooseConvKernel(conv2d(4, 4, 16, 3), true), 'im2col', 'too few channels for Winograd')
  t.equal(chooseConvKernel(conv2d(8, 8, 56, 3), true), 'winograd63', '8 channels are enough')
  t.equal(chooseConvKernel(conv2d(512, 512, 7, 3), true), 'narrow', '7x7, 512 channels: the narrow GEMM')
  t.equal(chooseConvKernel(conv2d(512, 512, 7, 3), false), 'im2col', 'no narrow GEMM without a constant weight')
  t.equal(chooseConvKernel(conv2d(2048, 512, 7, 1), true), 'narrow', "ResNet's 1x1 at 7x7")
  t.equal(chooseConvKernel(conv2d(1024, 2048, 14, 1, { stride: 2 }), true), 'narrow', "ResNet's stride-2 downsample to 7x7")
  t.equal(chooseConvKernel(conv2d(64, 256, 13, 1), true), 'gemm1x1', 'a short reduction (K = 64) stays with gemm1x1')
  t.equal(chooseConvKernel(conv2d(256, 256, 28, 3, { stride: 2 }), true), 'narrow', "ResNet's 3x3 stride 2: phase planes, not im2col")
  t.equal(chooseConvKernel(conv2d(256, 512, 56, 1, { stride: 2, pad: 0 }), true), 'im2col', "ResNet's first downsample (784 output pixels): im2col")
  t.equal(chooseConvKernel(conv2d(512, 1024, 28, 1, { stride: 2, pad: 0 }), true), 'narrow', '... the next one (196 pixels) stays narrow')
  t.equal(chooseConvKernel(conv2d(256, 256, 28, 3, { stride: 2 }), false), 'im2col', '... only with a constant weight')
  t.equal(chooseConvKernel(conv2d(16, 64, 55, 3), true), 'narrow', "SqueezeNet's 3x3 16->64: too short a reduction for Winograd")
  t.equal(chooseConvKernel(conv2d(32, 128, 27, 3), true), 'winograd63', '32 input channels keep F(6,3)')
  t.equal(chooseConvKernel(conv2d(64, 256, 13, 3), true), 'narrow', "SqueezeNet's 3x3 64->256 at 13x13: narrow, not F(2,3)")
  t.equal(chooseConvKernel(conv2d(128, 128, 13, 3), true), 'winograd23', '... but 128 input channels keep F(2,3)')
  t.equal(chooseConvKernel(conv2d(16, 16, 56, 3, { stride: 2 }), true), 'im2col', '16 output channels: half a narrow tile')
  t.equal(chooseConvKernel(conv2d(3, 64, 224, 7, { stride: 2 }), true), 'im2col', 'stems keep im2col by rows')
  t.equal(chooseConvKernel(conv2d(512, 128, 28, 1), true), 'gemm1x1', '784 pixels: vectors along pixels fill')
  t.equal(chooseConvKernel(conv2d(1024, 256, 14, 1), true), 'narrow', "ResNet's 1x1 1024->256 at 14x14")
  t.equal(chooseConvKernel(conv2d(512, 1000, 13, 1), true), 'narrow', '13x13 with 1000 output channels')
  t.equal(chooseConvKernel(conv2d(256, 1024, 14, 1), true), 'narrow', "ResNet's 1x1 256->1024 at 14x14")
  t.equal(chooseConvKernel(conv2d(256, 1024, 17, 1), true), 'gemm1x1', '289 pixels: vectors along pixels')
  t.equal(chooseConvKernel(conv2d(16, 16, 7, 3), true), 'winograd23', '7x7 with a short reduction (K = 144): Winograd')
  t.equal(chooseConvKernel(conv2d(32, 32, 28, 5, { group: 32 }), true), 'depthwise', 'depthwise 5x5: depthwise_kxk')
  t.equal(chooseConvKernel(conv2d(32, 32, 28, 3, { group: 32, dilation: 2 }), true), 'depthwise', 'dilated depthwise 3x3: depthwise_kxk')
  t.equal(chooseConvKernel(conv2d(32, 32, 28, 5, { group: 32, stride: 3 }), true), 'direct', 'stride 3: no depthwise kernel')
  t.equal(chooseConvKernel(conv2d(400, 400, 7, 3, { group: 25 }), true), 'grouped', "RegNetX-400MF's 3x3, 16 channels per group")
  t.equal(chooseConvKernel(conv2d(128, 128, 56, 3, { group: 32 }), true), 'grouped', "ResNeXt's 3x3, 4 channels per group")
  t.equal(chooseConvKernel(conv2d(128, 128, 56, 3, { group: 32 }), false), 'im2col', '... only with a constant weight (its filter is packed once)')
  t.equal(chooseConvKernel(conv2d(240, 480, 28, 1, { group: 3 }), true), 'grouped', "ShuffleNet v1's grouped 1x1")
  t.equal(chooseConvKernel(conv2d(64, 64, 28, 3, { group: 4, stride: 3 }), true), 'im2col', 'stride 3: per-group im2col')
  t.equal(chooseConvKernel(conv2d(960, 256, 14, 3, { dilation: 12 }), true), 'taps', "DeepLabV3's ASPP at dilation 12 on 14x14: 324 of 1,764 tap-pixels read the input")
  t.equal(chooseConvKernel(conv2d(960, 256, 14, 3, { dilation: 12 }), false), 'im2col', '... its filter is rearranged once, so only a constant one')
  t.equal(chooseConvKernel(conv2d(960, 256, 28, 3, { dilation: 6 }), true), 'narrow', 'dilation 6 on 28x28: most taps read the input')
  t.same(tapsGeometry(conv2d(960, 256, 14, 3, { dilation: 12 })), { tapPixels: 196 + 4 * 28 + 4 * 4, copiedMax: 28, inPlace: true })
  t.equal(defaultConvSlices('winograd63', resnet), 1)
  t.equal(defaultConvSlices('im2col', conv2d(3, 32, 224, 3, { stride: 2 })), 1, 'a small column matrix is one slice')
  t.ok(defaultConvSlices('im2col', conv2d(128, 128, 112, 3)) > 4, 'VGG 3x3 128->128 at 112x112 is sliced')
})

t.test("narrow's cost: its panels as the weight, the input in place or in phase planes, one Cᵀ tile per thread", async (t) => {
  const a64 = (b: number) => Math.ceil(b / 64) * 64
  const pw = conv2d(2048, 500, 7, 1)
  const c = convCost('narrow', pw, 1)
  t.equal(c.weightBytes, 4 * 512 * 2048, '500 output channels are 32 panels of 16')
  t.equal(c.flops, convCost('gemm1x1', pw, 1).flops, 'the same products as the 1x1 GEMM')
  t.equal(c.workspaceBytes, 64 + 8 * 2048 + 64 + 4 * 32 * 49, 'a 1x1 reads its input in place: row offsets and a tile')
  t.equal(convCost('narrow', pw, 1, { threads: 2 }).workspaceBytes - c.workspaceBytes, 4 * 32 * 49, 'each thread adds its tile')
  // 3x3 pad 1 at 7x7: planes of 9 rows by 7 + 2 columns per channel, 6 rows of 9 virtual columns and 7 more
  t.same(narrowGeometry(conv2d(512, 512, 7, 3), 1), { b: 'phases', bFloats: 512 * 9 * 9, maxCols: 6 * 9 + 7 })
  t.equal(convCost('narrow', conv2d(512, 512, 7, 3), 1).workspaceBytes, 64 + 8 * 4608 + 4 * 512 * 81 + 64 + a64(4 * 32 * 61),
    'a 3x3 copies its padded input once instead of building K x pixels columns')
  // stride 2: four phases of 15 x 15 (14 output rows and columns plus one), not 9 shifted copies
  t.same(narrowGeometry(conv2d(256, 256, 28, 3, { stride: 2 }), 1), { b: 'phases', bFloats: 256 * 4 * 15 * 15, maxCols: 13 * 15 + 14 })
  t.same(narrowGeometry(conv2d(1024, 2048, 14, 1, { stride: 2 }), 1), { b: 'phases', bFloats: 1024 * 49, maxCols: 49 },
    'a strided 1x1 copies only the phase it reads')
  // a slice of 10 pixels of a 7-wide output spans at most 3 rows, plus the 2 the taps reach below
  t.same(narrowGeometry(conv2d(8, 16, 7, 3), 5), { b: 'phases', bFloats: 8 * 5 * 9, maxCols: 2 * 9 + 7 })
  t.equal(convCost('narrow', conv2d(64, 64, 20, 1), 1).workspaceBytes, 64 + 8 * 64 + 64 + 4 * 32 * 256, 'the tile holds at most 256 columns')
})
