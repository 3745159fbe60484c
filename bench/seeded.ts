// SPDX-License-Identifier: Apache-2.0
// mulberry32, as lib/cli/inputs.ts's seededRandom: the same inputs in every engine's process. A module of
// its own that imports nothing, so that a benchmark child of onnxruntime does not load flexpipe to draw them.
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
