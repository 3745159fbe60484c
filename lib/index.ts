// SPDX-License-Identifier: Apache-2.0
// flexpipe's public API.
export { open, openPackage, openElastic } from './api/open.js'
export { ElasticEngine, type ElasticOpenOptions, type Classification, type ElasticStats } from './runtime/elastic-engine.js'
export { prepareElastic, type ElasticPrepareOptions, type ElasticPrepareReport } from './prepare/prepare-elastic.js'
export { profileElastic, type ProfileOptions, type ProfileReport } from './prepare/profile-elastic.js'
export type { ElasticPlan, ElasticPlanner } from './plan/elastic/index.js'
export { Engine, type OpenOptions, type OnnxEngineStats } from './runtime/engine.js'
export { EngineBase, type EngineStats, type OpTiming, type TracedRun } from './runtime/engine-base.js'
export type { ExecutionPlan, PlannedBuffer, BufferKind } from './plan/execution-plan.js'
export { planSvg, type PlanCaption } from './plan/draw/plan-svg.js'
export { runTrace, type Trace, type TraceEvent } from './runtime/run-trace.js'
export { BudgetedEngine, type PackageOpenOptions, type BudgetStats, type BudgetChange } from './runtime/budgeted-engine.js'
export type { AutoBudgetStats, AutoBudgetChange } from './runtime/budget-follower.js'
export { prepare, type PrepareOptions, type PrepareReport } from './prepare/prepare.js'
export { tensor, type Tensor, type TensorInfo, type DType, type TypedArray } from './model/tensor.js'
export {
  FlexpipeError,
  ArgumentError,
  OptionError,
  ModelFormatError,
  UnsupportedOperatorError,
  ShapeError,
  InputError,
  DisposedError,
  IOError,
  NativeError,
  AddonLoadError,
  PackageError,
  MemoryBudgetError,
  PlanInfeasibleError,
  LatencyTargetError,
  DeviceProfileError,
} from './errors.js'
export { supportedOpTypes } from './model/ops/registry.js'
export { nativeInfo } from './native/info.js'
