// SPDX-License-Identifier: Apache-2.0
// The elementwise operator group: unary functions, broadcasting arithmetic, comparisons and logic,
// variadic reductions, Where, Clip, Dropout and casts (native ops in native/runtime/ops/eltwise_*.cc).
import type { OpDef } from './op-def.js'
import { unaryOps } from './eltwise-unary.js'
import { specialOps } from './eltwise-special.js'
import { binaryOps } from './eltwise-binary.js'
import { naryOps } from './eltwise-nary.js'
import { castOps } from './eltwise-cast.js'

export const eltwiseOps: OpDef[] = [...unaryOps, ...specialOps, ...binaryOps, ...naryOps, ...castOps]
