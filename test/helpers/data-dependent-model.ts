// SPDX-License-Identifier: Apache-2.0
// A detection head's post-processing, as exporters write it: the sizes of most of its values depend on
// the scores (NonZero of a threshold, TopK of at most 5 of what passed). `num` boxes come in.
import { makeModel } from './make-model.js'

export function detectionPostprocess(num: number | string = 'num'): Uint8Array {
  return makeModel({
    opset: 13,
    inputs: [
      { name: 'scores', dtype: 'float32', dims: [1, num] },
      { name: 'boxes', dtype: 'float32', dims: [num, 4] },
    ],
    outputs: [
      { name: 'kept', dtype: 'float32' },
      { name: 'top_scores', dtype: 'float32' },
      { name: 'top_index', dtype: 'int64' },
      { name: 'top_boxes', dtype: 'float32' },
    ],
    initializers: [
      { name: 'threshold', dims: [], floats: [0.5] },
      { name: 'row1', dims: [], int64s: [1] },
      { name: 'flat', dims: [1], int64s: [-1] },
      { name: 'five', dims: [1], int64s: [5] },
    ],
    nodes: [
      { op: 'Greater', inputs: ['scores', 'threshold'], outputs: ['mask'] },
      { op: 'NonZero', inputs: ['mask'], outputs: ['where'], name: 'above/NonZero' },
      { op: 'Gather', inputs: ['where', 'row1'], outputs: ['cols'], int: { axis: 0 } },
      { op: 'Gather', inputs: ['boxes', 'cols'], outputs: ['kept'], int: { axis: 0 } },
      { op: 'Reshape', inputs: ['scores', 'flat'], outputs: ['scores_flat'] },
      { op: 'Gather', inputs: ['scores_flat', 'cols'], outputs: ['kept_scores'], int: { axis: 0 } },
      { op: 'Shape', inputs: ['kept_scores'], outputs: ['count'] },
      { op: 'Min', inputs: ['count', 'five'], outputs: ['k'] },
      { op: 'TopK', inputs: ['kept_scores', 'k'], outputs: ['top_scores', 'top_index'], int: { axis: 0 }, name: 'best/TopK' },
      { op: 'Gather', inputs: ['kept', 'top_index'], outputs: ['top_boxes'], int: { axis: 0 } },
    ],
  })
}
