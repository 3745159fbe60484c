// SPDX-License-Identifier: Apache-2.0
// The plan of an elastic package opened without a target latency: the full model, every layer and shard
// at the highest stored bitwidth (fp32), streamed layer by layer like any plan; shards go to the preload
// buffer in layer order while they fit. No device profile is needed: nothing is chosen by time.
import type { ElasticPlan, PlannedShard, PreloadEntry } from './types.js'

/** `shardBytes(layer, shard)`: the padded bytes of that shard's version at `bits`. */
export function fullModelPlan(layers: number, heads: number, bits: number, shardBytes: (layer: number, shard: number) => number, preloadBytes: number): ElasticPlan {
  const preload: PreloadEntry[] = []
  let held = 0
  let loadBytes = 0
  const shards: PlannedShard[][] = []
  for (let layer = 0; layer < layers; layer++) {
    const row: PlannedShard[] = []
    for (let shard = 0; shard < heads; shard++) {
      const bytes = shardBytes(layer, shard)
      const preloaded = held + bytes <= preloadBytes && preload.length === layer * heads + shard
      if (preloaded) {
        preload.push({ layer, shard, bits, bytes })
        held += bytes
      } else loadBytes += bytes
      row.push({ shard, bits, preloaded, bytes })
    }
    shards.push(row)
  }
  return {
    planner: 'full-model',
    schedule: 'pipelined',
    targetMs: Infinity,
    depth: layers,
    width: heads,
    shards,
    preload,
    preloadBytes: held,
    uniformBits: bits,
    aib: new Array<number>(layers).fill(0),
    modelledMs: Number.NaN,
    loadBytes,
    bitsHistogram: { [bits]: layers * heads },
  }
}
