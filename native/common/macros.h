// SPDX-License-Identifier: Apache-2.0
// Debug checks that vanish in release builds (XNNPACK-style preconditions in kernels).
#pragma once

#include <cassert>

#ifdef NDEBUG
#define FLEXPIPE_DCHECK(cond) ((void)0)
#else
#define FLEXPIPE_DCHECK(cond) assert(cond)
#endif

#define FLEXPIPE_OVERREAD 64
