// SPDX-License-Identifier: Apache-2.0
// The elastic (STI) pipeline planners: re-exports only.
export { planElastic, planCompute, minimumTargetMs, type SubModel } from './elastic-plan.js'
export { planLoadAndExec, planStdPL, planPreloadModel } from './baselines.js'
export { checkAIB } from './aib.js'
export { simulatePipeline, pipelineTimeline } from './simulate.js'
export { stagingWindow, windowedMakespan } from './staging-window.js'
export { LatencyTargetError } from '../../errors.js'
export type {
  AibCheck,
  BaselineOptions,
  ElasticOptions,
  ElasticPlan,
  ElasticPlanner,
  ElasticProfile,
  ElasticSchedule,
  MeasuredAccuracy,
  PipelineTimeline,
  PlannedShard,
  PlanShape,
  PreloadEntry,
  RankedImportance,
  ShardBytes,
  ShardRef,
} from './types.js'
