// SPDX-License-Identifier: Apache-2.0
// The device profile prepare records in a model package: per layer, the measured time of each kernel the
// planner may choose (the default kernels, then the lean ones that read raw-sized weights: the lean
// Winograd kernels in one pass, the narrow GEMM or im2col in another), and the cold read bandwidth of
// the package's file system (O_DIRECT). The budget planner uses it to order kernels by measured latency
// and to trade compute for IO when weight loading, not compute, bounds the latency. Measured by
// lib/prepare/measure-budget-device.ts.
import type { StepLayer } from '../plan/budget/layer-options.js'
import type { PlanProfile } from '../plan/budget/plan-budget.js'

export interface BudgetDeviceProfile {
  readonly threads: number
  /** Cold (O_DIRECT when available) read bandwidth, bytes per second. */
  readonly readBandwidth: number
  /** Whether the bandwidth was measured with O_DIRECT. */
  readonly direct: boolean
  /** Median milliseconds per layer (node name) and kernel. */
  readonly layers: Record<string, Record<string, number>>
}

/**
 * The planner's view of a recorded device profile (lib/profile/budget-device.ts), when it was measured with
 * the engine's thread count; the read bandwidth is capped by the throttle.
 */
export function planProfile(recorded: unknown, threads: number, throttle?: number): ((layers: readonly StepLayer[]) => PlanProfile) | undefined {
  if (typeof recorded !== 'object' || recorded === null) return undefined
  const r = recorded as Partial<BudgetDeviceProfile>
  if (r.threads !== threads || typeof r.readBandwidth !== 'number' || !(r.readBandwidth > 0) || typeof r.layers !== 'object' || r.layers === null) return undefined
  const table = r.layers as Record<string, Record<string, unknown>>
  const bandwidth = Math.min(r.readBandwidth, throttle ?? Infinity)
  return (layers) => ({
    bandwidth,
    ms: (i, kernel) => {
      const v = table[layers[i]?.step.node.name ?? '']?.[kernel]
      return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined
    },
  })
}
