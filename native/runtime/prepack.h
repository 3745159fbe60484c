// SPDX-License-Identifier: Apache-2.0
// Weight transforms run once, at plan time, on constant inputs: packing GEMM panels, Winograd
// filter transforms. The planner asks for them (KernelCall.prepack in lib/model/ops/op-def.ts),
// stores the result in the arena's persistent region, and the kernel reads the packed form.
// Packed layouts may depend on the selected ISA (panel widths), which is fixed per process.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "runtime/tensor_view.h"

namespace flexpipe {

struct PrepackEntry {
    const char* name;
    // Sets out->dtype, out->rank and out->dims (numel too) for weight w and the transform's ints.
    Status (*shape)(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out);
    // Writes the transformed weight into out (allocated by the caller with shape()'s dims).
    Status (*run)(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out);
    // Optional: writes part `part` of `parts` of run()'s result into the same out (the parts together
    // write all of it, each a disjoint range), so that one large weight can be packed by several
    // threads (runtime/write_batch.h). nullptr: the transform runs whole.
    Status (*run_part)(const TensorView& w, const int64_t* ints, int32_t n_ints, int64_t part, int64_t parts,
                       const TensorView& out) = nullptr;
};

const std::vector<PrepackEntry>& prepack_table();
const PrepackEntry* find_prepack(const char* name);

void register_gemm_prepacks(std::vector<PrepackEntry>& table);
void register_conv_prepacks(std::vector<PrepackEntry>& table);

}  // namespace flexpipe
