// SPDX-License-Identifier: Apache-2.0
// What a memory budget covers besides the arena: the engine's bookkeeping (native memory, the V8 heap that
// planning grows) and the arrays infer() returns, estimated before opening and measured while opening.
import { fusedResidualAttr } from '../../model/fuse-residual.js'
import { hasFusedDepthwise } from '../../model/fuse-conv-depthwise.js'
import { hasFusedPool } from '../../model/fuse-conv-pool.js'
import type { Graph } from '../../model/ir.js'
import { valueBytes } from '../../model/ir.js'
import type { BudgetModel } from './plan-budget.js'

/**
 * The engine's memory outside its arena, which a memory budget also covers (so the process grows by about
 * the budget, not the budget plus bookkeeping): native memory besides the arena (thread stacks, the
 * io_uring ring, the decoded program; 5 MiB) and the V8 heap that opening and planning grow (the graph,
 * kernel options, plans: 1 MiB + 48 KiB per layer, at most 16 MiB — the 16.8 MB young generation that
 * opening the bench models grew V8's to; it can grow to 33.5 MB). Calibrated on the bench models
 * (ResNet-152: 12.6 MB of heap growth measured for 258 layers; PP-OCR cls: 2.7 MB). An estimate: it
 * sets the minimum budget, which prepare reports before any engine exists; an engine then measures
 * what its opening cost (measuredReserve) and keeps the larger.
 */
/**
 * The layer count bookkeepingBytes is calibrated with: the model's layers, plus two for each Conv that
 * absorbed a residual Add (and the Relu after it, lib/model/fuse-residual.ts). The calibration predates
 * that fusion, and planning grows the heap no less for it: ResNet-152 fused plans 158 layers with the
 * same 12.6 MB of heap growth as its 258 unfused ones (counting 158 left a 100 MB budget 5 MB short:
 * peak 108.6 MB). A stem that absorbed its max pool (lib/model/fuse-conv-pool.ts) counts one more, as
 * does a conv that absorbed its depthwise (lib/model/fuse-conv-depthwise.ts).
 */
export function bookkeepingLayers(m: { readonly layers: readonly unknown[]; readonly graph: Graph }): number {
  return m.layers.length + 2 * m.graph.nodes.filter((n) => n.attrs.has(fusedResidualAttr)).length + m.graph.nodes.filter(hasFusedPool).length + m.graph.nodes.filter(hasFusedDepthwise).length
}

/**
 * What a memory budget covers besides the arena: the bookkeeping (bookkeepingBytes) and the arrays
 * infer() returns, which hold the outputs once (the ones an op writes straight into them take no arena
 * bytes, lib/plan/memory/outputs-in-place.ts; the others are also in the arena until copied out). GPT-2's
 * 25.7 MB logits array was outside the budget before, and in the arena too.
 */
export function budgetReserve(m: Pick<BudgetModel, 'graph' | 'inferred' | 'layers'>, ranged = false): number {
  const layers = bookkeepingLayers(m)
  return bookkeepingBytes(layers) + (ranged ? heapBytes(layers) + shapeProgramsPerLayer * layers : 0) + outputBytes(m)
}

/** A measured reserve this much above the estimate plans again at open (below it, not worth the time). */
export const replanSlackBytes = 1 << 20

/**
 * The budget outside the arena as measured: the process's resident growth while the engine opened and
 * planned (its V8 heap, the decoded graph, allocator caches), what the first inferences add outside the
 * arena (`inferenceNativeBytes`), and the arrays infer() returns. Other work the process does while an
 * engine opens is counted too, which only makes the arena smaller.
 */
export function measuredReserve(openGrowth: number, m: Pick<BudgetModel, 'graph' | 'inferred'>): number {
  return openGrowth + inferenceNativeBytes + outputBytes(m)
}

/**
 * What the first inferences add outside the arena: worker thread stacks and their allocator arenas,
 * the reader's queue and code pages touched for the first time. Calibrated on the bench packages as
 * peak minus arena minus open growth minus outputs, one process each: -0.9 (GPT-2) to 3.0 MB
 * (SqueezeNet), 1.7-1.8 MB for ViT-B/16 and VGG-19. V8 can also grow its young generation during the
 * first inferences (MobileNetV2), which this does not cover.
 */
export const inferenceNativeBytes = 2 << 20

function outputBytes(m: Pick<BudgetModel, 'graph' | 'inferred'>): number {
  let outputs = 0
  for (const o of m.graph.outputs) {
    const v = m.inferred.values.get(o.name)
    if (v !== undefined) outputs += valueBytes(v)
  }
  return outputs
}

export function bookkeepingBytes(layers: number): number {
  return (5 << 20) + heapBytes(layers)
}

/**
 * The shape programs a package prepared for a range keeps (16, BudgetShapes), estimated before open:
 * 16 KiB per layer, 1 KiB per layer per program. BERT-base's decoded program measured 215 KB (617 slots,
 * 877 operands, its words copy included), 0.6 KB per layer. Once the template exists the engine counts
 * the real bytes instead (`programBytes`, BudgetShapes.keptBytes).
 */
const shapeProgramsPerLayer = 16 << 10

/**
 * What one program costs while kept: its words (the JS copy) and the native decoded program (a slot
 * record of 112 bytes per tensor, a 92-byte view and id per op operand, 8 bytes per int and float).
 */
export function programBytes(words: Float64Array): number {
  const slots = words[1]!
  const ops = words[2]!
  let at = 3 + slots * (4 + 8)
  let operands = 0
  let attrs = 0
  for (let k = 0; k < ops && at + 5 <= words.length; k++) {
    const n = words[at + 1]! + words[at + 2]!
    const a = words[at + 3]! + words[at + 4]!
    operands += n
    attrs += a
    at += 5 + n + a
  }
  return words.length * 8 + slots * 112 + operands * 92 + attrs * 8
}

/**
 * The V8 heap that planning grows: 1 MiB + 48 KiB per layer, at most 16 MiB. A package prepared for a
 * dim range (`ranged` in budgetReserve) grows it about as much again at open, where its plan's shape
 * template is checked against the program built at five probe shapes of the range (measured: ResNet-50,
 * batch 1..8, 3.7 MB and 6 MB more peak than the same package with the dim fixed; BERT-base, seq_len
 * 8..128, 9.8 MB).
 */
function heapBytes(layers: number): number {
  return Math.min(16 << 20, (1 << 20) + layers * 48 * 1024)
}
