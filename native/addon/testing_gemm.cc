// SPDX-License-Identifier: Apache-2.0
// _testing entry points of the gemm kernel family:
//   _testing.gemmInfo(isa) -> {mr, nr, mc, kc, nc, tilePanels}: the tile and blocking of that ISA's table
//   _testing.gemmWorkspaceBytes(isa, m, n, k, threads, rawB) -> gemm_workspace_bytes of that problem
//   _testing.gemm(isa, o): runs the packed-panel driver (runtime/gemm_driver.h) with the table of
//     `isa` on caller-owned Float32Arrays, writing o.c in place; returns the threads it could use.
//     o: {k, a, aRs, aCs, aRow0?, b, bRs, bCs, packB?, packN0?, packN1?, c, cRs, cCs?, m0, m1, n0, n1,
//         alpha?, beta?, bias?, clamp?: [min, max], threads?, add?: Float32Array laid out as c}
//     packB packs columns [packN0, packN1) (default [n0, n1)) as a weight slice before the run; the
//     workspace is offset by 4 bytes from any alignment, like o's arrays may be.
#include <cstdint>
#include <string>
#include <vector>

#include "addon/convert.h"
#include "addon/isa_arg.h"
#include "addon/testing.h"
#include "runtime/dispatch.h"
#include "runtime/gemm_driver.h"

namespace flexpipe {

namespace {

double float_field(const Napi::Object& o, const char* name, double fallback) {
    const Napi::Value v = o.Get(name);
    if (v.IsUndefined()) return fallback;
    if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), std::string(name) + ": expected a number");
    return v.As<Napi::Number>().DoubleValue();
}

// A Float32Array field (null when absent); throws unless its last index `hi` is inside it.
float* array_field(const Napi::Object& o, const char* name, int64_t hi, bool required) {
    const Napi::Value v = o.Get(name);
    if (v.IsUndefined() || v.IsNull()) {
        if (required) throw Napi::TypeError::New(o.Env(), std::string(name) + ": expected a Float32Array");
        return nullptr;
    }
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
        throw Napi::TypeError::New(o.Env(), std::string(name) + ": expected a Float32Array");
    Napi::Float32Array arr = v.As<Napi::Float32Array>();
    if (hi >= static_cast<int64_t>(arr.ElementLength()))
        throw Napi::RangeError::New(o.Env(), std::string(name) + ": too short for the strides given");
    return arr.Data();
}

}  // namespace

namespace testing_js {

Napi::Value gemm_info(const Napi::CallbackInfo& info) {
    const GemmKernels g = kernels_for(isa_arg(info[0])).gemm;
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("mr", g.mr), o.Set("nr", g.nr), o.Set("mc", g.mc), o.Set("kc", g.kc), o.Set("nc", g.nc);
    o.Set("tilePanels", g.tile_panels);
    return o;
}

Napi::Value gemm_workspace_bytes(const Napi::CallbackInfo& info) {
    const GemmKernels g = kernels_for(isa_arg(info[0])).gemm;
    static const float dummy = 0.0f;
    GemmProblem p;
    p.m1 = info[1].As<Napi::Number>().Int64Value();
    p.n1 = info[2].As<Napi::Number>().Int64Value();
    p.k = info[3].As<Napi::Number>().Int64Value();
    if (!info[5].ToBoolean().Value()) p.b_packed = GemmPackedB{&dummy, p.k, 0, p.n1, g.nr};
    const int threads = static_cast<int>(info[4].As<Napi::Number>().Int64Value());
    return Napi::Number::New(info.Env(), static_cast<double>(gemm_workspace_bytes(g, p, threads)));
}

Napi::Value gemm(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const GemmKernels g = kernels_for(isa_arg(info[0])).gemm;
    if (!info[1].IsObject()) throw Napi::TypeError::New(env, "options: expected an object");
    const Napi::Object o = info[1].As<Napi::Object>();
    GemmProblem p;
    p.k = int_field(o, "k", 0);
    p.m0 = int_field(o, "m0", 0), p.m1 = int_field(o, "m1", 0);
    p.n0 = int_field(o, "n0", 0), p.n1 = int_field(o, "n1", 0);
    if (p.k < 0 || p.m0 < 0 || p.m1 < p.m0 || p.n0 < 0 || p.n1 < p.n0)
        throw Napi::RangeError::New(env, "k, m0..m1, n0..n1: bad ranges");
    const int64_t kk = p.k > 0 ? p.k - 1 : 0;
    p.a_rs = int_field(o, "aRs", 0), p.a_cs = int_field(o, "aCs", 1), p.a_row0 = int_field(o, "aRow0", 0);
    const bool used = p.k > 0 && p.m1 > p.m0 && p.n1 > p.n0;  // A and B are read at all
    p.a = array_field(o, "a", used ? (p.m1 - 1 - p.a_row0) * p.a_rs + kk * p.a_cs : -1, used);
    p.b_rs = int_field(o, "bRs", 0), p.b_cs = int_field(o, "bCs", 1);
    const bool pack = o.Get("packB").ToBoolean().Value();
    const int64_t pn0 = int_field(o, "packN0", p.n0), pn1 = int_field(o, "packN1", p.n1);
    if (pack && (pn0 > p.n0 || pn1 < p.n1 || pn0 < 0)) throw Napi::RangeError::New(env, "packN0..packN1: must cover n0..n1");
    const float* b = array_field(o, "b", used ? kk * p.b_rs + ((pack ? pn1 : p.n1) - 1) * p.b_cs : -1, used);
    p.c_rs = int_field(o, "cRs", 0), p.c_cs = int_field(o, "cCs", 1);
    p.c = array_field(o, "c", (p.m1 - 1) * p.c_rs + (p.n1 - 1) * p.c_cs, true);
    p.bias = array_field(o, "bias", p.n1 - 1, false);
    p.row_bias = array_field(o, "rowBias", p.m1 - 1, false);
    p.add = array_field(o, "add", (p.m1 - 1) * p.c_rs + (p.n1 - 1) * p.c_cs, false);
    p.a_in_place = o.Get("aInPlace").ToBoolean().Value();
    p.b_in_place = o.Get("bInPlace").ToBoolean().Value();
    p.alpha = static_cast<float>(float_field(o, "alpha", 1.0));
    p.beta = static_cast<float>(float_field(o, "beta", 0.0));
    const Napi::Value clamp = o.Get("clamp");
    if (clamp.IsArray()) {
        p.clamp = true;
        p.min = static_cast<float>(clamp.As<Napi::Array>().Get(0u).As<Napi::Number>().DoubleValue());
        p.max = static_cast<float>(clamp.As<Napi::Array>().Get(1u).As<Napi::Number>().DoubleValue());
    }
    const int threads = static_cast<int>(int_field(o, "threads", 1));
    std::vector<float> packed;
    if (pack) {
        packed.resize(static_cast<size_t>(gemm_packed_b_floats(p.k, pn1 - pn0, g.nr)) + 1);
        gemm_pack_b(g, b, p.b_rs, p.b_cs, p.k, pn0, pn1, packed.data());
        p.b_packed = GemmPackedB{packed.data(), p.k, pn0, pn1, g.nr};
    } else {
        p.b = b;
    }
    const size_t bytes = gemm_workspace_bytes(g, p, threads);
    std::vector<uint8_t> ws(bytes + 4);
    const Status s = gemm_run(g, p, ws.data() + 4, bytes, threads);
    if (!s.is_ok()) throw Napi::Error::New(env, s.message());
    return Napi::Number::New(env, gemm_threads_fitting(g, p, bytes, threads));
}

}  // namespace testing_js

}  // namespace flexpipe
