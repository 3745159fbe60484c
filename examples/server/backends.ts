// SPDX-License-Identifier: Apache-2.0
// The engine behind one model: flexpipe (the server's purpose) or onnxruntime-node (the same server on
// the other engine, for the load test's comparison; a devDependency of flexpipe, not a dependency).
import { open, type DType, type Tensor } from 'flexpipe'

/** A model input as the request decoder checks it; a string dim is symbolic (any size). */
export interface InputSpec {
  readonly name: string
  readonly dtype: DType
  readonly dims: readonly (number | string)[] | undefined
}

export interface ModelBackend {
  readonly engine: 'flexpipe' | 'onnxruntime'
  readonly inputs: readonly InputSpec[]
  infer(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>>
  /** The engine's memory figures where it has them. */
  memory(): { readonly memoryBudgetBytes?: number; readonly arenaBytes?: number }
  close(): Promise<void>
}

export interface BackendOptions {
  readonly threads?: number
  /** Bytes, or 'auto' (follow the container's memory limit); memory-budget packages only. */
  readonly memoryBudget?: number | 'auto'
}

/** Opens an ONNX model or a flexpipe package with flexpipe. */
export async function openFlexpipe(path: string, options: BackendOptions): Promise<ModelBackend> {
  const engine = await open(path, {
    ...(options.threads === undefined ? {} : { threads: options.threads }),
    ...(options.memoryBudget === undefined ? {} : { memoryBudget: options.memoryBudget }),
  })
  return {
    engine: 'flexpipe',
    inputs: engine.inputs.map((i) => ({ name: i.name, dtype: i.dtype, dims: i.dims })),
    infer: (feeds) => engine.infer(feeds),
    memory: () => {
      const st = engine.stats()
      return { arenaBytes: st.arenaBytes, ...('memoryBudget' in st ? { memoryBudgetBytes: st.memoryBudget } : {}) }
    },
    close: () => engine.close(),
  }
}

const ortTypes: Partial<Record<string, DType>> = { float32: 'float32', int64: 'int64', int32: 'int32', uint8: 'uint8', bool: 'bool', int8: 'int8', float16: 'float16' }

/** Opens an ONNX model with onnxruntime-node (its default session options but the thread count). */
export async function openOnnxruntime(path: string, options: BackendOptions): Promise<ModelBackend> {
  if (options.memoryBudget !== undefined) throw new Error('onnxruntime has no memory budget: drop --budget')
  const ort = await import('onnxruntime-node')
  const session = await ort.InferenceSession.create(path, {
    ...(options.threads === undefined ? {} : { intraOpNumThreads: options.threads }),
    interOpNumThreads: 1,
  })
  const inputs = session.inputMetadata.map((m) => {
    if (!m.isTensor) throw new Error(`input ${m.name} is not a tensor`)
    const dtype = ortTypes[m.type]
    if (dtype === undefined) throw new Error(`input ${m.name}: element type ${m.type} is not served`)
    return { name: m.name, dtype, dims: m.shape }
  })
  return {
    engine: 'onnxruntime',
    inputs,
    infer: async (feeds) => {
      const ortFeeds: Record<string, InstanceType<typeof ort.Tensor>> = {}
      for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = new ort.Tensor(t.dtype as 'float32', t.data as Float32Array, t.dims as number[])
      const results = await session.run(ortFeeds)
      const out: Record<string, Tensor> = {}
      for (const [name, t] of Object.entries(results)) out[name] = { dtype: t.type as DType, dims: [...t.dims], data: t.data as Float32Array }
      return out
    },
    memory: () => ({}),
    close: () => session.release(),
  }
}
