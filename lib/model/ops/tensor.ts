// SPDX-License-Identifier: Apache-2.0
// The tensor op group: shape ops, constants, data movement, indexing and reductions.
import type { OpDef } from './op-def.js'
import { constOps } from './tensor-const.js'
import { indexOps } from './tensor-index.js'
import { moveOps } from './tensor-move.js'
import { reduceOps } from './tensor-reduce.js'
import { selectOps } from './tensor-select.js'
import { shapeOps } from './tensor-shape.js'

export const tensorOps: OpDef[] = [...shapeOps, ...constOps, ...moveOps, ...indexOps, ...reduceOps, ...selectOps]
