// SPDX-License-Identifier: Apache-2.0
// flexpipe's public API.
export { open, Engine, type OpenOptions, type EngineStats, type OpTiming } from './runtime/engine.js'
export { tensor, type Tensor, type TensorInfo, type DType, type TypedArray } from './tensor.js'
export {
  FlexpipeError,
  ArgumentError,
  ModelFormatError,
  UnsupportedOperatorError,
  ShapeError,
  InputError,
  DisposedError,
  IOError,
  NativeError,
  AddonLoadError,
  PackageError,
  PlanInfeasibleError,
} from './errors.js'
export { supportedOpTypes } from './model/ops/registry.js'
export { nativeInfo } from './native/info.js'
