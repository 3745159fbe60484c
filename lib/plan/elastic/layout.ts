// SPDX-License-Identifier: Apache-2.0
// The planners' working form of a sub-model: per shard its index, bitwidth index and preload flag.
import { ArgumentError } from '../../errors.js'
import { bitsIndex, type Model } from './profile.js'
import type { PlanShape } from './types.js'

/** Entry i = layer * width + j is the j-th shard of that layer (layer-major, "layer order"). */
export interface Layout {
  readonly depth: number
  readonly width: number
  readonly shard: Int32Array
  readonly bi: Int32Array
  readonly preloaded: Uint8Array
}

/**
 * Shards 0..width-1 of the bottom `depth` layers, the first `preloadCount` of them in layer order
 * preloaded at bitwidth index `preloadBi`, the rest loaded at `loadBi`.
 */
export function uniformLayout(depth: number, width: number, preloadCount: number, preloadBi: number, loadBi: number): Layout {
  const count = depth * width
  const shard = new Int32Array(count)
  const bi = new Int32Array(count)
  const preloaded = new Uint8Array(count)
  for (let i = 0; i < count; i++) {
    shard[i] = i % width
    preloaded[i] = i < preloadCount ? 1 : 0
    bi[i] = i < preloadCount ? preloadBi : loadBi
  }
  return { depth, width, shard, bi, preloaded }
}

/** Checks a (possibly hand-made) plan against the profile and converts it. */
export function layoutOfPlan(model: Model, plan: PlanShape): Layout {
  const layers = plan.shards
  const depth = Array.isArray(layers) ? layers.length : 0
  const width = depth > 0 && Array.isArray(layers[0]) ? layers[0]!.length : 0
  if (depth < 1 || depth > model.layers || width < 1 || width > model.shardsPerLayer)
    throw new ArgumentError(`plan.shards: expected 1..${model.layers} layers of 1..${model.shardsPerLayer} shards, got ${depth} x ${width}`)
  const shard = new Int32Array(depth * width)
  const bi = new Int32Array(depth * width)
  const preloaded = new Uint8Array(depth * width)
  layers.forEach((row, k) => {
    if (!Array.isArray(row) || row.length !== width)
      throw new ArgumentError(`plan.shards[${k}]: expected ${width} shards like layer 0, got ${row?.length}`)
    row.forEach((s, j) => {
      const at = `plan.shards[${k}][${j}]`
      if (!Number.isInteger(s.shard) || s.shard < 0 || s.shard >= model.shardsPerLayer)
        throw new ArgumentError(`${at}.shard: expected integer 0..${model.shardsPerLayer - 1}, got ${s.shard}`)
      shard[k * width + j] = s.shard
      bi[k * width + j] = bitsIndex(model, s.bits, `${at}.bits`)
      preloaded[k * width + j] = s.preloaded ? 1 : 0
    })
  })
  return { depth, width, shard, bi, preloaded }
}
