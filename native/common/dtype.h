// SPDX-License-Identifier: Apache-2.0
// Element types, numbered as ONNX TensorProto.DataType so the TypeScript side can pass them through.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexpipe {

enum class DType : int32_t {
    undefined = 0,
    f32 = 1,
    u8 = 2,
    i8 = 3,
    u16 = 4,
    i16 = 5,
    i32 = 6,
    i64 = 7,
    boolean = 9,  // one byte per element, 0 or 1
    f16 = 10,     // storage only (IEEE half, bits in a uint16_t)
    f64 = 11,
    u32 = 12,
    u64 = 13,
};

static inline size_t dtype_size(DType t) {
    switch (t) {
        case DType::f32: case DType::i32: case DType::u32: return 4;
        case DType::u8: case DType::i8: case DType::boolean: return 1;
        case DType::u16: case DType::i16: case DType::f16: return 2;
        case DType::i64: case DType::f64: case DType::u64: return 8;
        default: return 0;
    }
}

static inline bool dtype_valid(int32_t t) { return t > 0 && dtype_size(static_cast<DType>(t)) != 0; }

const char* dtype_name(DType t);

}  // namespace flexpipe
