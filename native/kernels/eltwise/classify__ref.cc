// SPDX-License-Identifier: Apache-2.0
// IsNaN / IsInf on float rows, 0/1 results (scalar reference).
#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {

namespace {

using namespace eltwise_detail;

template <typename T>
void classify_row(ClassifyOp op, const T* x, uint8_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const auto v = Elem<T>::load(x[i]);
        bool r = false;
        switch (op) {
            case ClassifyOp::is_nan: r = std::isnan(v); break;
            case ClassifyOp::is_inf: r = std::isinf(v); break;
            case ClassifyOp::is_pos_inf: r = std::isinf(v) && v > 0; break;
            case ClassifyOp::is_neg_inf: r = std::isinf(v) && v < 0; break;
            default: FLEXPIPE_DCHECK(false);
        }
        y[i] = r ? 1 : 0;
    }
}

}  // namespace

void classify__ref(DType t, ClassifyOp op, const void* x, uint8_t* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    switch (t) {
        case DType::f32: return classify_row(op, static_cast<const float*>(x), y, n);
        case DType::f64: return classify_row(op, static_cast<const double*>(x), y, n);
        case DType::f16: return classify_row(op, static_cast<const Half*>(x), y, n);
        default: FLEXPIPE_DCHECK(false); return;
    }
}

}  // namespace flexpipe
