// SPDX-License-Identifier: Apache-2.0
// onnxruntime-node as the correctness oracle: runs a model on the same feeds as flexpipe.
import * as ort from 'onnxruntime-node'
import type { Tensor } from '../../lib/index.js'
import type { DType } from '../../lib/model/dtype.js'

const ortType: Partial<Record<DType, ort.Tensor.Type>> = {
  float32: 'float32',
  float64: 'float64',
  int64: 'int64',
  int32: 'int32',
  uint8: 'uint8',
  int8: 'int8',
  bool: 'bool',
}

/**
 * Graph optimizations are off: the oracle runs the graph as written. (Its own fusions move outputs:
 * on PP-OCR det, onnxruntime 'all' vs 'disabled' differ by 8.8e-5, most of the conformance tolerance.)
 */
export async function runOrt(modelPath: string, feeds: Record<string, Tensor>, threads = 1): Promise<Record<string, Tensor>> {
  const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'disabled' })
  try {
    const ortFeeds: Record<string, ort.Tensor> = {}
    for (const [name, t] of Object.entries(feeds)) {
      ortFeeds[name] = new ort.Tensor(ortType[t.dtype]!, t.data as never, t.dims)
    }
    const out = await session.run(ortFeeds)
    const result: Record<string, Tensor> = {}
    for (const [name, t] of Object.entries(out)) {
      result[name] = { dtype: t.type as DType, dims: t.dims.slice(), data: t.data as Float32Array }
    }
    return result
  } finally {
    await session.release()
  }
}
