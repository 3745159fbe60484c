// SPDX-License-Identifier: Apache-2.0
// The table of plan-time weight transforms.
#include "runtime/prepack.h"

#include <cstring>

namespace flexpipe {

static std::vector<PrepackEntry> make_prepack_table() {
    std::vector<PrepackEntry> table;
    register_gemm_prepacks(table);
    register_conv_prepacks(table);
    return table;
}

const std::vector<PrepackEntry>& prepack_table() {
    static const std::vector<PrepackEntry> table = make_prepack_table();
    return table;
}

const PrepackEntry* find_prepack(const char* name) {
    for (const PrepackEntry& e : prepack_table())
        if (std::strcmp(e.name, name) == 0) return &e;
    return nullptr;
}

}  // namespace flexpipe
