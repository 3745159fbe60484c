// SPDX-License-Identifier: Apache-2.0
// The persistent region of the arena: where weights and plan constants are placed, once each.
import { planAlignment } from '../plan/memory-plan.js'

const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a

export class ConstantStore {
  private readonly offsets = new Map<string, number>()
  private end = 0

  /** Offset of a placed constant. */
  offsetOf(key: string): number | undefined {
    return this.offsets.get(key)
  }

  /** Reserves room for a new constant; returns its offset. */
  reserve(key: string, bytes: number): number {
    const offset = alignUp(this.end, planAlignment)
    this.offsets.set(key, offset)
    this.end = offset + bytes
    return offset
  }

  /** Bytes the persistent region spans. */
  get bytes(): number {
    return this.end
  }
}
