// SPDX-License-Identifier: Apache-2.0
// The nn op group: convolutions, pools, GEMM/MatMul, normalizations, softmax family, resize, space/depth.
import type { OpDef } from './op-def.js'
import { convOps } from './nn-conv.js'
import { matmulOps } from './nn-matmul.js'
import { normOps } from './nn-norm.js'
import { poolOps } from './nn-pool.js'
import { resizeOps } from './nn-resize.js'
import { spaceOps } from './nn-space.js'

export const nnOps: OpDef[] = [...convOps, ...poolOps, ...matmulOps, ...normOps, ...resizeOps, ...spaceOps]
