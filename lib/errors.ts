// SPDX-License-Identifier: Apache-2.0
// The error classes users see. Every error flexpipe raises is a FlexpipeError with a stable `code`.

export class FlexpipeError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
}

/** A caller passed an argument of the wrong type or range (options, feeds). */
export class ArgumentError extends FlexpipeError {
  constructor(message: string) {
    super('ERR_FLEXPIPE_INVALID_ARGUMENT', message)
  }
}

/**
 * Options open() does not know, or that do not apply to what the file is (a memory budget for a plain
 * ONNX model, a latency target for a memory-budget package). `options` names them.
 */
export class OptionError extends ArgumentError {
  readonly options: readonly string[]
  constructor(options: readonly string[], message: string) {
    super(message)
    this.options = options
  }
}

/** The model file is not ONNX, is truncated, or is internally inconsistent. */
export class ModelFormatError extends FlexpipeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_FLEXPIPE_MODEL_FORMAT', message, options)
  }
}

/** A package (.fpk) is not one, is truncated or corrupt, or is of another format version. */
export class PackageError extends FlexpipeError {
  /** The blob the problem is in, when it is in one. */
  readonly blob?: string
  constructor(message: string, options?: { blob?: string; cause?: unknown }) {
    super('ERR_FLEXPIPE_PACKAGE', message, options)
    if (options?.blob !== undefined) this.blob = options.blob
  }
}

/** The model uses an operator (or an attribute value) flexpipe does not implement. */
export class UnsupportedOperatorError extends FlexpipeError {
  readonly node: string
  readonly opType: string
  readonly opset: number
  constructor(node: string, opType: string, opset: number, detail?: string) {
    super(
      'ERR_FLEXPIPE_UNSUPPORTED_OPERATOR',
      `unsupported operator ${opType} (opset ${opset}) at node '${node}'` +
        (detail ? `: ${detail}` : '') +
        '; see the supported-operator table in the README',
    )
    this.node = node
    this.opType = opType
    this.opset = opset
  }
}

/**
 * An operator needs the contents of an input (a shape, pads, scales ...) to plan, and they are not
 * known. The engine answers by planning with the values of the graph inputs they derive from.
 */
export class ValueNeededError extends UnsupportedOperatorError {
  readonly inputIndex: number
  /** Name of the value whose contents are needed (set by shape inference). */
  valueName?: string
  constructor(node: string, opType: string, opset: number, inputIndex: number, detail: string) {
    super(node, opType, opset, detail)
    this.inputIndex = inputIndex
  }
}

/** Shapes do not agree: a feed contradicts the model, or two symbolic dims disagree. */
export class ShapeError extends FlexpipeError {
  constructor(message: string) {
    super('ERR_FLEXPIPE_SHAPE', message)
  }
}

/** A feed is missing, unknown, or of the wrong dtype. */
export class InputError extends FlexpipeError {
  constructor(message: string) {
    super('ERR_FLEXPIPE_INPUT', message)
  }
}

/** The memory budget is below what the model needs even with the most slicing. */
export class MemoryBudgetError extends FlexpipeError {
  /** The smallest budget (bytes) this package plans in, when known. */
  readonly minimumBudget?: number
  constructor(message: string, minimumBudget?: number) {
    super('ERR_FLEXPIPE_BUDGET', message)
    if (minimumBudget !== undefined) this.minimumBudget = minimumBudget
  }
}

/**
 * A memory plan does not fit in its budget. `step` is the compute step where planning failed (-1: the
 * graph inputs, before step 0) and `bytesNeeded` the bytes live at that step (padded as planned).
 */
export class PlanInfeasibleError extends FlexpipeError {
  readonly step: number
  readonly bytesNeeded: number
  readonly budget: number
  constructor(step: number, bytesNeeded: number, budget: number) {
    const where = step < 0 ? 'the graph inputs (before step 0)' : `step ${step}`
    const advice =
      bytesNeeded > budget
        ? `raise the budget to at least ${bytesNeeded} bytes`
        : 'the free memory at that step is fragmented; raise the budget (minimumBudget() gives the smallest that plans)'
    super(
      'ERR_FLEXPIPE_MEMORY_BUDGET',
      `failed to plan memory: ${where} does not fit (bytesNeeded=${bytesNeeded}, budget=${budget}); ${advice}`,
    )
    this.step = step
    this.bytesNeeded = bytesNeeded
    this.budget = budget
  }
}

/**
 * No sub-model meets a latency target. `minimumMs` is the smallest target that plans with the same
 * profile and preload buffer; `minimumPreloadBytes`, when set, is a preload buffer that would make
 * the requested target plan (absent when compute alone exceeds the target).
 */
export class LatencyTargetError extends FlexpipeError {
  readonly targetMs: number
  readonly minimumMs: number
  readonly minimumPreloadBytes?: number
  constructor(what: string, targetMs: number, minimumMs: number, minimumPreloadBytes?: number) {
    const advice =
      minimumPreloadBytes === undefined
        ? `raise the target to at least ${minimumMs} ms`
        : `raise the target to at least ${minimumMs} ms, or the preload buffer to at least ${minimumPreloadBytes} bytes`
    super(
      'ERR_FLEXPIPE_LATENCY',
      `failed to plan ${what}: no sub-model finishes within targetMs=${targetMs} (minimumMs=${minimumMs}); ${advice}`,
    )
    this.targetMs = targetMs
    this.minimumMs = minimumMs
    if (minimumPreloadBytes !== undefined) this.minimumPreloadBytes = minimumPreloadBytes
  }
}

/** The engine was closed. */
export class DisposedError extends FlexpipeError {
  constructor(what: string) {
    super('ERR_FLEXPIPE_DISPOSED', `${what}: the engine is closed; open a new one`)
  }
}

/** Reading the model or its data failed at the OS level. */
export class IOError extends FlexpipeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_FLEXPIPE_IO', message, options)
  }
}

/** The native engine reported a failure (the message carries its reason). */
export class NativeError extends FlexpipeError {
  constructor(code: string, message: string) {
    super(code, message)
  }
}

/** The addon binary could not be loaded for this platform. */
export class AddonLoadError extends FlexpipeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_FLEXPIPE_ADDON_LOAD', message, options)
  }
}

/** An elastic package has no device profile for this machine and configuration, or a stale one. */
export class DeviceProfileError extends FlexpipeError {
  constructor(message: string) {
    super('ERR_FLEXPIPE_PROFILE', message)
  }
}
