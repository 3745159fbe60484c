// SPDX-License-Identifier: Apache-2.0
// Human-readable element type names for error messages.
#include "common/dtype.h"

namespace flexpipe {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::f32: return "float32";
        case DType::u8: return "uint8";
        case DType::i8: return "int8";
        case DType::u16: return "uint16";
        case DType::i16: return "int16";
        case DType::i32: return "int32";
        case DType::i64: return "int64";
        case DType::boolean: return "bool";
        case DType::f16: return "float16";
        case DType::f64: return "float64";
        case DType::u32: return "uint32";
        case DType::u64: return "uint64";
        default: return "undefined";
    }
}

}  // namespace flexpipe
