// SPDX-License-Identifier: Apache-2.0
// Builds the operator table from the op groups.
#include "runtime/op_registry.h"

namespace flexpipe {

static std::vector<OpEntry> make_op_table() {
    std::vector<OpEntry> table;
    register_eltwise_ops(table);
    register_nn_ops(table);
    register_tensor_ops(table);
    register_quant_ops(table);
    return table;
}

const std::vector<OpEntry>& op_table() {
    static const std::vector<OpEntry> table = make_op_table();
    return table;
}

}  // namespace flexpipe
