// SPDX-License-Identifier: Apache-2.0
// The persistent region of the arena: where weights and plan constants are placed, once each.
import type { DType } from '../model/dtype.js'
import type { PlannedBuffer } from '../plan/execution-plan.js'
import { planAlignment } from '../plan/memory/memory-plan.js'
import type { PlacedConstant } from '../plan/program-builder.js'
import { alignUp } from '../align.js'

export class ConstantStore {
  private readonly placed = new Map<string, PlacedConstant & { readonly bytes: number }>()
  private end = 0

  get(key: string): PlacedConstant | undefined {
    return this.placed.get(key)
  }

  /** Reserves room for a new constant; returns its placement. */
  reserve(key: string, dtype: DType, dims: readonly number[], bytes: number): PlacedConstant {
    const offset = alignUp(this.end, planAlignment)
    const p = { offset, dtype, dims }
    this.placed.set(key, { ...p, bytes })
    this.end = offset + bytes
    return p
  }

  /** Every constant placed so far, as resident buffers of a program of `ops` ops (they stay for every run). */
  buffers(ops: number): PlannedBuffer[] {
    return Array.from(this.placed, ([key, p]): PlannedBuffer => ({ kind: 'resident', name: key, region: 0, offset: p.offset, bytes: p.bytes, from: 0, to: ops - 1 }))
  }

  /** Bytes the persistent region spans. */
  get bytes(): number {
    return this.end
  }
}
