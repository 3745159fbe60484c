// SPDX-License-Identifier: Apache-2.0
// The options of an elastic package's engine, and their checks (lib/validate.ts's field checks).
import { ArgumentError } from '../errors.js'
import type { ElasticPlanner } from '../plan/elastic/index.js'
import type { ElasticDeviceProfile } from '../profile/elastic-device.js'
import { checkBoolean, checkChoice, checkCommon, checkInteger, checkOptionNames, checkPositive } from '../validate.js'

export interface ElasticOpenOptions {
  /** T: each inference should finish within this many ms. Without it the engine runs the full model. */
  readonly targetLatencyMs?: number
  /** P: bytes of the preload buffer kept across calls (default 0). */
  readonly preloadBytes?: number
  /** Bitwidth preloaded shards are held in (default: the highest quantized bitwidth). */
  readonly preloadBits?: number
  /** Threads (default: cores, at most 4). The device profile must have been measured with it. */
  readonly threads?: number
  readonly io?: 'auto' | 'uring' | 'pread'
  /** Cold reads with O_DIRECT (default true). */
  readonly direct?: boolean
  /** Emulated storage bandwidth in bytes/s (a throttle), e.g. 257e6; the profile must match it. */
  readonly bandwidth?: number
  /** Sequence length the plan is made for; inputs are padded to it (default: the tokenizer's max_length). */
  readonly seq?: number
  /** The planning algorithm: flexpipe's (default) or a baseline of the seed's evaluation. */
  readonly planner?: ElasticPlanner
  /** The one bitwidth of the 'stdpl' and 'preload-model' baselines. */
  readonly plannerBits?: number
  /** Use this profile instead of the package's (benchmarks). */
  readonly deviceProfile?: ElasticDeviceProfile
  /**
   * Keep the latency promise honest at run time (default true): the engine tracks measured / modelled
   * time of its recent inferences (recent median x p95/median spread, online-calibration.ts) and, when
   * that would put inferences past 1.05 T (or leaves much room), re-plans with it in place of the
   * profile's calibration jitter (latency-controller.ts).
   */
  readonly adaptive?: boolean
  /**
   * With `adaptive`: how many inferences open runs on a worst-case input (seq distinct tokens) with
   * the IO as configured, to check the plan against the device as it is now rather than when it was
   * profiled (default 8; 0: none). When their median measured / modelled time is outside what the plan allows
   * for, open re-plans and measures again (at most three rounds) before it returns.
   */
  readonly openCalibrationRuns?: number
}

export interface CheckedElasticOptions {
  readonly threads: number
  readonly io: 'auto' | 'uring' | 'pread'
  readonly targetLatencyMs?: number
  readonly preloadBytes: number
  readonly direct: boolean
  readonly bandwidth?: number
  readonly adaptive: boolean
  readonly openCalibrationRuns: number
  readonly planner: ElasticPlanner
}

export function checkElasticOptions(options: ElasticOpenOptions, path: string): CheckedElasticOptions {
  const o = checkOptionNames(options, 'elastic', path)
  const targetLatencyMs = checkPositive(o, 'targetLatencyMs', 'a number of milliseconds')
  const bandwidth = checkPositive(o, 'bandwidth', 'bytes per second')
  if (o.deviceProfile !== undefined && (typeof o.deviceProfile !== 'object' || o.deviceProfile === null)) throw new ArgumentError('deviceProfile: expected a device profile object')
  return {
    ...checkCommon(o),
    ...(targetLatencyMs === undefined ? {} : { targetLatencyMs }),
    ...(bandwidth === undefined ? {} : { bandwidth }),
    preloadBytes: checkInteger(o, 'preloadBytes', 0, Number.MAX_SAFE_INTEGER, 0, 'a non-negative integer'),
    direct: checkBoolean(o, 'direct', true),
    adaptive: checkBoolean(o, 'adaptive', true),
    openCalibrationRuns: checkInteger(o, 'openCalibrationRuns', 0, 64, 8),
    planner: checkChoice(o, 'planner', ['flexpipe', 'load-and-exec', 'stdpl', 'preload-model'] as const, 'flexpipe'),
  }
}
