// SPDX-License-Identifier: Apache-2.0
// Property tests of the layer slicing planner (lib/plan/budget/slicing.ts) over seeded random layers: every
// choice fits its limit, the kernel is the first that can fit at all, the weight slice count is the
// fewest that fits (or, with a weight window, the fewest within it), slice bounds are well formed and a
// layer that cannot fit is reported.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import {
  chooseLayer,
  layerBytes,
  layerMinimumBytes,
  LayerTooLargeError,
  planSlicing,
  sliceBounds,
  sliceBytes,
  weightUnits,
  type KernelOption,
  type LayerInfo,
  type SliceableWeight,
} from '../../lib/plan/budget/slicing.js'

const seed = 20240611
const cases = 400

type Rand = () => number
const int = (rand: Rand, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))

function randomWeight(rand: Rand): SliceableWeight {
  const unit = [1, 4, 8, 16, 24][int(rand, 0, 4)]!
  const channels = int(rand, 1, 400)
  const unitBytes = unit * int(rand, 4, 4000)
  // Whole units, the last one stored whole (as the slicing header describes).
  return { bytes: weightUnits({ bytes: 0, channels, unit, unitBytes }) * unitBytes, channels, unit, unitBytes }
}

function randomOption(rand: Rand, kernel: string): KernelOption {
  const defaultInputSlices = int(rand, 1, 3)
  const maxInputSlices = rand() < 0.5 ? defaultInputSlices : defaultInputSlices + int(rand, 1, 8)
  const perSlice = int(rand, 0, 2) * int(rand, 0, 200_000)
  const base = int(rand, 0, 50_000)
  const hasWeight = rand() < 0.85
  return {
    kernel,
    ...(hasWeight ? { weight: randomWeight(rand) } : {}),
    weightSliceable: hasWeight && rand() < 0.8,
    fixedBytes: int(rand, 0, 3) * int(rand, 0, 20_000),
    // More input slices: a smaller workspace (each slice's im2col buffer is smaller).
    workspace: (is: number) => base + Math.ceil(perSlice / is),
    defaultInputSlices,
    maxInputSlices,
  }
}

function randomLayer(rand: Rand, step: number): LayerInfo {
  const kernels = ['winograd63', 'im2col', 'direct', 'gemm', 'as-is']
  const n = int(rand, 1, 3)
  return { step, liveBytes: int(rand, 0, 500_000), options: Array.from({ length: n }, (_, i) => randomOption(rand, kernels[i]!)) }
}

/** The smallest and the unsliced footprint of a layer, to draw limits around both. */
function unslicedBytes(layer: LayerInfo): number {
  return Math.max(...layer.options.map((o) => layerBytes(layer, o, 1, o.defaultInputSlices)))
}

function randomLimit(rand: Rand, layer: LayerInfo): number {
  const lo = layerMinimumBytes(layer) * 0.8
  const hi = unslicedBytes(layer) * 1.2
  return Math.floor(lo + rand() * Math.max(0, hi - lo))
}

/** Input slice counts chooseLayer considers, in its order. */
const inputSliceCandidates = (o: KernelOption): number[] =>
  o.maxInputSlices > o.defaultInputSlices ? [o.defaultInputSlices, o.maxInputSlices] : [o.defaultInputSlices]

/** Brute force: the fewest weight slices with which option o fits at `is` input slices, or undefined. */
function fewestByScan(layer: LayerInfo, o: KernelOption, is: number, limit: number): number | undefined {
  const most = o.weight !== undefined && o.weightSliceable ? weightUnits(o.weight) : 1
  for (let ws = 1; ws <= most; ws++) if (layerBytes(layer, o, ws, is) <= limit) return ws
  return undefined
}

const canFit = (layer: LayerInfo, o: KernelOption, limit: number): boolean =>
  inputSliceCandidates(o).some((is) => fewestByScan(layer, o, is, limit) !== undefined)

const describe = (layer: LayerInfo, limit: number, i: number): string =>
  `seed ${seed} case ${i}: limit ${limit}, live ${layer.liveBytes}, options ${JSON.stringify(layer.options.map((o) => ({ ...o, workspace: [o.workspace(1), o.workspace(o.maxInputSlices)] })))}`

t.test('chooseLayer: the footprint fits, the kernel is the first that can fit, weight slices are the fewest', async (t) => {
  const rand = seededRandom(seed)
  let chosen = 0
  let sliced = 0
  let later = 0
  let none = 0
  for (let i = 0; i < cases; i++) {
    const layer = randomLayer(rand, i)
    const limit = randomLimit(rand, layer)
    const what = describe(layer, limit, i)
    const c = chooseLayer(layer, limit)
    const first = layer.options.findIndex((o) => canFit(layer, o, limit))
    if (c === undefined) {
      none++
      if (first !== -1) t.fail(`no choice, but option ${first} can fit: ${what}`)
      if (!(layerMinimumBytes(layer) > limit)) t.fail(`no choice, but layerMinimumBytes ${layerMinimumBytes(layer)} <= limit: ${what}`)
      continue
    }
    chosen++
    const o = layer.options[c.option]!
    if (c.bytes !== layerBytes(layer, o, c.weightSlices, c.inputSlices)) t.fail(`bytes ${c.bytes} is not the choice's footprint: ${what}`)
    if (!(c.bytes <= limit)) t.fail(`footprint ${c.bytes} > limit: ${what}`)
    if (c.option !== first) t.fail(`chose option ${c.option}, but option ${first} is the first that can fit: ${what}`)
    if (!inputSliceCandidates(o).includes(c.inputSlices)) t.fail(`input slices ${c.inputSlices} is neither default nor max: ${what}`)
    if (c.inputSlices !== o.defaultInputSlices && fewestByScan(layer, o, o.defaultInputSlices, limit) !== undefined) {
      t.fail(`chose ${c.inputSlices} input slices though the default ${o.defaultInputSlices} fits: ${what}`)
    }
    if (c.weightSlices !== fewestByScan(layer, o, c.inputSlices, limit)) t.fail(`weight slices ${c.weightSlices} is not the fewest that fits: ${what}`)
    if (c.weightSlices > 1 && layerBytes(layer, o, c.weightSlices - 1, c.inputSlices) <= limit) t.fail(`one fewer weight slice also fits: ${what}`)
    if (c.weightSlices > 1) sliced++
    if (c.option > 0) later++
  }
  // The generator must reach every branch, or the properties above prove little.
  t.ok(chosen > cases / 4, `${chosen} layers got a choice`)
  t.ok(none > 0, `${none} layers cannot fit their limit`)
  t.ok(sliced > 10, `${sliced} choices slice the weight`)
  t.ok(later > 10, `${later} choices fall back to a later kernel`)
})

t.test('chooseLayer with a weight window: the same kernel and input slices, the fewest weight slices within the window', async (t) => {
  const rand = seededRandom(seed + 1)
  let narrowed = 0
  let unreachable = 0
  for (let i = 0; i < cases; i++) {
    const layer = randomLayer(rand, i)
    const limit = randomLimit(rand, layer)
    const what = describe(layer, limit, i)
    const plain = chooseLayer(layer, limit)
    if (!(JSON.stringify(chooseLayer(layer, limit, Infinity)) === JSON.stringify(plain))) t.fail(`an infinite window changed the choice: ${what}`)
    if (plain === undefined) {
      if (chooseLayer(layer, limit, 1) !== undefined) t.fail(`a window made a layer fit that does not: ${what}`)
      continue
    }
    const o = layer.options[plain.option]!
    const w = o.weight
    const window = Math.max(1, Math.floor(rand() * (w?.bytes ?? 1)))
    const c = chooseLayer(layer, limit, window)!
    if (c.option !== plain.option || c.inputSlices !== plain.inputSlices) t.fail(`the window changed the kernel or input slices: ${what}`)
    if (!(c.bytes <= limit)) t.fail(`footprint ${c.bytes} > limit with window ${window}: ${what}`)
    if (c.weightSlices < plain.weightSlices) t.fail(`fewer weight slices than without the window: ${what}`)
    if (w === undefined || !o.weightSliceable) {
      if (c.weightSlices !== plain.weightSlices) t.fail(`an unsliceable weight was cut: ${what}`)
      continue
    }
    const most = weightUnits(w)
    if (sliceBytes(w, most) > window) {
      unreachable++
      if (c.weightSlices !== Math.max(plain.weightSlices, most)) t.fail(`window ${window} out of reach, but not the most slices: ${what}`)
      continue
    }
    if (c.weightSlices > plain.weightSlices) {
      narrowed++
      if (!(sliceBytes(w, c.weightSlices) <= window)) t.fail(`slice ${sliceBytes(w, c.weightSlices)} > window ${window}: ${what}`)
      if (sliceBytes(w, c.weightSlices - 1) <= window) t.fail(`one fewer slice is also within window ${window}: ${what}`)
    } else if (!(sliceBytes(w, c.weightSlices) <= window)) t.fail(`kept ${c.weightSlices} slices of ${sliceBytes(w, c.weightSlices)} bytes > window ${window}: ${what}`)
  }
  t.ok(narrowed > 20, `${narrowed} weights cut finer for the window`)
  t.ok(unreachable > 0, `${unreachable} windows below the finest slice`)
})

t.test('sliceBounds: increasing from 0 to channels, interior on unit multiples, min(slices, units) slices', async (t) => {
  const rand = seededRandom(seed + 1)
  for (let i = 0; i < 2000; i++) {
    const channels = int(rand, 1, 600)
    const unit = int(rand, 1, 40)
    const slices = int(rand, 1, 60)
    const what = `seed ${seed + 1} case ${i}: channels ${channels}, unit ${unit}, slices ${slices}`
    const b = sliceBounds(channels, unit, slices)
    const units = Math.ceil(channels / unit)
    if (b.length - 1 !== Math.min(slices, units)) t.fail(`${b.length - 1} slices, expected ${Math.min(slices, units)}: ${what} -> [${b}]`)
    if (b[0] !== 0 || b[b.length - 1] !== channels) t.fail(`bounds do not span [0, ${channels}]: ${what} -> [${b}]`)
    for (let k = 1; k < b.length; k++) if (!(b[k]! > b[k - 1]!)) t.fail(`bounds not increasing at ${k}: ${what} -> [${b}]`)
    for (let k = 1; k < b.length - 1; k++) if (b[k]! % unit !== 0) t.fail(`bound ${b[k]} is not a multiple of ${unit}: ${what}`)
  }
  t.same(sliceBounds(10, 4, 0), [0, 10], 'zero slices means one slice')
})

t.test('sliceBytes does not grow with the slice count (beyond 1)', async (t) => {
  const rand = seededRandom(seed + 2)
  for (let i = 0; i < 300; i++) {
    const w = randomWeight(rand)
    const units = weightUnits(w)
    t.equal(sliceBytes(w, 1), w.bytes, 'one slice is the whole weight')
    for (let s = 2; s <= units + 2; s++) {
      const now = sliceBytes(w, s)
      const before = sliceBytes(w, s - 1)
      if (s > 2 && now > before) t.fail(`sliceBytes ${s} = ${now} > sliceBytes ${s - 1} = ${before}: ${JSON.stringify(w)}`)
      // The largest slice holds at least its share of the units.
      if (now < Math.ceil(units / Math.min(s, units)) * w.unitBytes) t.fail(`sliceBytes ${s} = ${now} is smaller than the largest slice: ${JSON.stringify(w)}`)
    }
  }
})

t.test('planSlicing chooses every layer or names the first that cannot fit', async (t) => {
  const rand = seededRandom(seed + 3)
  let thrown = 0
  let planned = 0
  for (let i = 0; i < 150; i++) {
    const layers = Array.from({ length: int(rand, 1, 12) }, (_, k) => randomLayer(rand, k * 2 + 1))
    const limit = randomLimit(rand, layers[int(rand, 0, layers.length - 1)]!)
    const firstBad = layers.find((l) => chooseLayer(l, limit) === undefined)
    if (firstBad === undefined) {
      planned++
      const choices = planSlicing(layers, limit)
      t.same(choices, layers.map((l) => chooseLayer(l, limit)), `seed ${seed + 3} case ${i}: each layer chosen alone`)
      continue
    }
    thrown++
    t.throws(() => planSlicing(layers, limit), LayerTooLargeError)
    try {
      planSlicing(layers, limit)
    } catch (err) {
      const e = err as LayerTooLargeError
      t.equal(e.step, firstBad.step, 'names the step of the first layer that cannot fit')
      t.equal(e.minimumBytes, layerMinimumBytes(firstBad), 'reports its minimum bytes')
      t.ok(e.minimumBytes > limit, `minimum ${e.minimumBytes} > limit ${limit}`)
      t.equal(e.limit, limit)
      t.match(e.message, new RegExp(`step ${firstBad.step} needs at least ${e.minimumBytes} bytes`))
    }
  }
  t.ok(thrown > 5 && planned > 5, `both outcomes reached (${planned} planned, ${thrown} thrown)`)
})

t.test('layerMinimumBytes is the footprint at the most slicing, and that limit always plans', async (t) => {
  const rand = seededRandom(seed + 4)
  for (let i = 0; i < 300; i++) {
    const layer = randomLayer(rand, i)
    const least = layerMinimumBytes(layer)
    const c = chooseLayer(layer, least)
    t.ok(c !== undefined && c.bytes <= least, `case ${i}: a limit of layerMinimumBytes (${least}) fits`)
    if (least > 0) t.equal(chooseLayer(layer, least - 1), undefined, `case ${i}: one byte less does not`)
  }
})
