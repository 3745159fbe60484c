// SPDX-License-Identifier: Apache-2.0
// Reference 8-bit integer max pooling (uint8 and int8).
#include "kernels/pool/pool_max.inl"

namespace flexpipe {

void maxpool_u8__ref(const PoolShape& s, const uint8_t* x, uint8_t* y, int64_t* indices, int storage_order,
                     int64_t plane_begin, int64_t plane_end) {
    maxpool_ref<uint8_t>(s, x, y, indices, storage_order, plane_begin, plane_end);
}

void maxpool_i8__ref(const PoolShape& s, const int8_t* x, int8_t* y, int64_t* indices, int storage_order,
                     int64_t plane_begin, int64_t plane_end) {
    maxpool_ref<int8_t>(s, x, y, indices, storage_order, plane_begin, plane_end);
}

}  // namespace flexpipe
