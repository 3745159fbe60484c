// SPDX-License-Identifier: Apache-2.0
// _testing entry points of the xf kernel family (the table of `isa`, on caller-owned Float32Arrays,
// written in place; lengths are checked so a bad call throws instead of touching memory):
//   _testing.xfAttentionWorkspaceFloats(seqKv, dh) -> attention_workspace_floats
//   _testing.xfAttention(isa, o): one head, rows [rowBegin, rowEnd). o: {q, k, v, out, mask?, seqQ,
//     seqKv, dh, ldq, ldk, ldv, ldo, maskLd?, scale, causal?, rowBegin?, rowEnd?}; the workspace is
//     allocated here, offset by 4 bytes from any alignment
//   _testing.xfLayerNormRow(isa, x, y, w, b|null, epsilon) -> [mean, invStd]; n = x.length
//   _testing.xfSoftmax(isa, x, y, n, stride)
//   _testing.xfUnary(isa, op, x, y, n, alpha, beta)      op: UnaryOp code
//   _testing.xfBinary(isa, op, a, sa, b, sb, y, n)       op: BinaryOp code; sa, sb in {0, 1}
//   _testing.xfClip(isa, x, y, n, lo, hi)
#include <cstdint>
#include <string>
#include <vector>

#include "addon/isa_arg.h"
#include "addon/testing.h"
#include "runtime/dispatch.h"

namespace flexpipe {

namespace {

int64_t int_arg(const Napi::Value& v, const char* name) {
    if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), std::string(name) + ": expected a number");
    return v.As<Napi::Number>().Int64Value();
}

double num_arg(const Napi::Value& v, const char* name) {
    if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), std::string(name) + ": expected a number");
    return v.As<Napi::Number>().DoubleValue();
}

// A Float32Array holding at least `need` elements (null/undefined gives nullptr unless required).
float* f32_arg(const Napi::Value& v, const char* name, int64_t need, bool required = true) {
    if (!required && (v.IsUndefined() || v.IsNull())) return nullptr;
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
        throw Napi::TypeError::New(v.Env(), std::string(name) + ": expected a Float32Array");
    Napi::Float32Array a = v.As<Napi::Float32Array>();
    if (need > static_cast<int64_t>(a.ElementLength()))
        throw Napi::RangeError::New(v.Env(),
                                    std::string(name) + ": too short (need " + std::to_string(need) + ")");
    return a.Data();
}

int64_t f32_len(const Napi::Value& v, const char* name) {
    f32_arg(v, name, 0);
    return static_cast<int64_t>(v.As<Napi::Float32Array>().ElementLength());
}

// Elements a [rows x cols] matrix with row stride ld spans.
int64_t span(int64_t rows, int64_t cols, int64_t ld) {
    return rows > 0 ? (rows - 1) * ld + cols : 0;
}

}  // namespace

namespace testing_js {

Napi::Value xf_attention_workspace_floats(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(attention_workspace_floats(
                                             int_arg(info[0], "seqKv"), int_arg(info[1], "dh"))));
}

Napi::Value xf_attention(const Napi::CallbackInfo& info) {
    const KernelTable t = kernels_for(isa_arg(info[0]));
    if (!info[1].IsObject()) throw Napi::TypeError::New(info.Env(), "options: expected an object");
    const Napi::Object o = info[1].As<Napi::Object>();
    AttentionArgs a;
    a.seq_q = int_arg(o.Get("seqQ"), "seqQ"), a.seq_kv = int_arg(o.Get("seqKv"), "seqKv");
    a.dh = int_arg(o.Get("dh"), "dh");
    a.ldq = int_arg(o.Get("ldq"), "ldq"), a.ldk = int_arg(o.Get("ldk"), "ldk");
    a.ldv = int_arg(o.Get("ldv"), "ldv"), a.ldo = int_arg(o.Get("ldo"), "ldo");
    const int64_t r0 = o.Has("rowBegin") ? int_arg(o.Get("rowBegin"), "rowBegin") : 0;
    const int64_t r1 = o.Has("rowEnd") ? int_arg(o.Get("rowEnd"), "rowEnd") : a.seq_q;
    if (a.dh < 1 || a.seq_q < 0 || a.seq_kv < 0 || r0 < 0 || r1 > a.seq_q || a.ldq < a.dh || a.ldk < a.dh ||
        a.ldv < a.dh || a.ldo < a.dh)
        throw Napi::RangeError::New(info.Env(), "xfAttention: bad shape");
    a.q = f32_arg(o.Get("q"), "q", span(a.seq_q, a.dh, a.ldq));
    a.k = f32_arg(o.Get("k"), "k", span(a.seq_kv, a.dh, a.ldk));
    a.v = f32_arg(o.Get("v"), "v", span(a.seq_kv, a.dh, a.ldv));
    a.o = f32_arg(o.Get("out"), "out", span(a.seq_q, a.dh, a.ldo));
    a.mask_ld = o.Has("maskLd") ? int_arg(o.Get("maskLd"), "maskLd") : 0;
    a.mask = f32_arg(o.Get("mask"), "mask", span(a.mask_ld ? a.seq_q : 1, a.seq_kv, a.mask_ld), false);
    a.scale = static_cast<float>(num_arg(o.Get("scale"), "scale"));
    a.causal = o.Get("causal").ToBoolean().Value();
    std::vector<float> ws(static_cast<size_t>(attention_workspace_floats(a.seq_kv, a.dh)) + 1);
    t.attention.fused(a, r0, r1, ws.data() + 1);
    return info.Env().Undefined();
}

Napi::Value xf_layer_norm_row(const Napi::CallbackInfo& info) {
    const KernelTable t = kernels_for(isa_arg(info[0]));
    const int64_t n = f32_len(info[1], "x");
    const int64_t w_n = f32_len(info[3], "w");
    const bool has_b = !info[4].IsNull() && !info[4].IsUndefined();
    const int64_t b_n = has_b ? f32_len(info[4], "b") : 0;
    if (n < 1 || (w_n != n && w_n != 1) || (has_b && b_n != n && b_n != 1))
        throw Napi::RangeError::New(info.Env(), "xfLayerNormRow: w and b must hold n or 1 values (n >= 1)");
    float mean = 0.0f, inv = 0.0f;
    t.attention.layernorm_row(f32_arg(info[1], "x", n), f32_arg(info[2], "y", n), n, f32_arg(info[3], "w", w_n), w_n,
                       has_b ? f32_arg(info[4], "b", b_n) : nullptr, b_n,
                       static_cast<float>(num_arg(info[5], "epsilon")), &mean, &inv);
    Napi::Array r = Napi::Array::New(info.Env(), 2);
    r.Set(0u, Napi::Number::New(info.Env(), mean));
    r.Set(1u, Napi::Number::New(info.Env(), inv));
    return r;
}

Napi::Value xf_softmax(const Napi::CallbackInfo& info) {
    const KernelTable t = kernels_for(isa_arg(info[0]));
    const int64_t n = int_arg(info[3], "n"), stride = int_arg(info[4], "stride");
    if (n < 0 || stride < 1) throw Napi::RangeError::New(info.Env(), "xfSoftmax: bad n or stride");
    t.attention.softmax(f32_arg(info[1], "x", span(n, 1, stride)), f32_arg(info[2], "y", span(n, 1, stride)), n,
                 stride);
    return info.Env().Undefined();
}

Napi::Value xf_unary(const Napi::CallbackInfo& info) {
    const KernelTable t = kernels_for(isa_arg(info[0]));
    const int64_t op = int_arg(info[1], "op"), n = int_arg(info[4], "n");
    if (op < 0 || op >= static_cast<int64_t>(UnaryOp::count) ||
        op == static_cast<int64_t>(UnaryOp::logical_not) || n < 0)
        throw Napi::RangeError::New(info.Env(), "xfUnary: bad op or n");
    UnaryParams p;
    p.alpha = num_arg(info[5], "alpha");
    p.beta = num_arg(info[6], "beta");
    t.eltwise.unary_f32(static_cast<UnaryOp>(op), p, f32_arg(info[2], "x", n), f32_arg(info[3], "y", n), n);
    return info.Env().Undefined();
}

Napi::Value xf_binary(const Napi::CallbackInfo& info) {
    const KernelTable t = kernels_for(isa_arg(info[0]));
    const int64_t op = int_arg(info[1], "op"), sa = int_arg(info[3], "sa"), sb = int_arg(info[5], "sb");
    const int64_t n = int_arg(info[7], "n");
    if (op < 0 || op > static_cast<int64_t>(BinaryOp::prelu) || (sa != 0 && sa != 1) ||
        (sb != 0 && sb != 1) || n < 0)
        throw Napi::RangeError::New(info.Env(), "xfBinary: bad op, strides or n");
    const int64_t need = n > 0 ? 1 : 0;
    t.eltwise.binary_f32(static_cast<BinaryOp>(op), f32_arg(info[2], "a", sa ? n : need), sa,
                    f32_arg(info[4], "b", sb ? n : need), sb, f32_arg(info[6], "y", n), n);
    return info.Env().Undefined();
}

Napi::Value xf_clip(const Napi::CallbackInfo& info) {
    const KernelTable t = kernels_for(isa_arg(info[0]));
    const int64_t n = int_arg(info[3], "n");
    if (n < 0) throw Napi::RangeError::New(info.Env(), "xfClip: bad n");
    t.eltwise.clip_f32(f32_arg(info[1], "x", n), f32_arg(info[2], "y", n), n,
                  static_cast<float>(num_arg(info[4], "lo")), static_cast<float>(num_arg(info[5], "hi")));
    return info.Env().Undefined();
}

}  // namespace testing_js

}  // namespace flexpipe
