// SPDX-License-Identifier: Apache-2.0
// _testing entry points of the conv kernel family (tests only; `isa` first, as in testing.h):
//   convCost(isa, algo, shape, slices, threads) -> {workspaceBytes, flops, weightBytes}
//       with the GEMM blocking of that ISA's table (runtime/conv_cost.h). algo: a ConvAlgo name.
//   convRun(isa, algo, o) -> threads used: the whole algorithm with that ISA's table on caller-owned
//       Float32Arrays (y written in place). o: {shape, x, w (raw [M, C/g, kh, kw]), bias?, residual? (as y), y, slices?,
//       threads?, clamp?: [lo, hi]}. Winograd, narrow and grouped filters are transformed first; the workspace is exactly
//       conv_cost(threads) bytes, 4 bytes off alignment, followed by a canary that must survive.
//   convWinogradInput(isa, 63 | 23, {x, plane, h, w, iy, ix, nc, v, vStride})
//   convWinogradOutput(isa, 63 | 23, {m, mStride, bias?, y, plane, w, rows, cols, nc, clamp?})
//   convWinogradGemm(isa, {k, a, aStride, b, d, dStride, rows})
//   convDepthwise(isa, {shape, x, w, bias?, y, clamp?, p0, p1, kxk?}): one depthwise 3x3 variant, or with
//   kxk: 1 the kh x kw one (shape's kh, kw, dilation; default 3, 3, 1)
//   convIm2col({shape, channels, x, p0, p1, nr, col, k0, k1}): the reference im2col
// shape (2-D): {n, c, m, group, h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl}, unit defaults except
// n/c/m/group = 1 and pads = 0; depthwise shape: {channels, h, w, oh, ow, stride, pt, pl}.
#include <cstdint>
#include <string>
#include <vector>

#include "addon/convert.h"
#include "addon/isa_arg.h"
#include "addon/testing.h"
#include "kernels/depthwise/depthwise.h"
#include "kernels/im2col/im2col.h"
#include "kernels/gemm/narrow.h"
#include "kernels/winograd/winograd.h"
#include "runtime/conv_cost.h"
#include "runtime/conv_run.h"
#include "runtime/conv_taps.h"
#include "runtime/dispatch.h"

namespace flexpipe {

namespace {

// A Float32Array field (null when absent and optional) holding at least `need` elements.
float* floats(const Napi::Object& o, const char* name, int64_t need, bool required = true) {
    const Napi::Value v = o.Get(name);
    if ((v.IsUndefined() || v.IsNull()) && !required) return nullptr;
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
        throw Napi::TypeError::New(o.Env(), std::string(name) + ": expected a Float32Array");
    Napi::Float32Array a = v.As<Napi::Float32Array>();
    if (static_cast<int64_t>(a.ElementLength()) < need)
        throw Napi::RangeError::New(o.Env(), std::string(name) + ": needs " + std::to_string(need) + " elements");
    return a.Data();
}

ConvActivation act_field(const Napi::Object& o) {
    ConvActivation act;
    const Napi::Value v = o.Get("clamp");
    if (v.IsArray()) {
        act.clamp = true;
        act.lo = static_cast<float>(v.As<Napi::Array>().Get(0u).As<Napi::Number>().DoubleValue());
        act.hi = static_cast<float>(v.As<Napi::Array>().Get(1u).As<Napi::Number>().DoubleValue());
    }
    return act;
}

ConvShape shape_field(const Napi::Object& o) {
    const Napi::Value v = o.Get("shape");
    if (!v.IsObject()) throw Napi::TypeError::New(o.Env(), "shape: expected an object");
    const Napi::Object s = v.As<Napi::Object>();
    ConvShape cs;
    cs.batch = int_field(s, "n", 1), cs.in_channels = int_field(s, "c", 1), cs.out_channels = int_field(s, "m", 1);
    cs.groups = int_field(s, "group", 1);
    cs.in[1] = int_field(s, "h", 1), cs.in[2] = int_field(s, "w", 1), cs.out[1] = int_field(s, "oh", 1), cs.out[2] = int_field(s, "ow", 1);
    cs.kernel[1] = int_field(s, "kh", 1), cs.kernel[2] = int_field(s, "kw", 1);
    cs.stride[1] = int_field(s, "sh", 1), cs.stride[2] = int_field(s, "sw", 1);
    cs.dilation[1] = int_field(s, "dh", 1), cs.dilation[2] = int_field(s, "dw", 1);
    cs.pad[1] = int_field(s, "pt", 0), cs.pad[2] = int_field(s, "pl", 0);
    const bool ok = cs.batch >= 1 && cs.groups >= 1 && cs.in_channels % cs.groups == 0 &&
                    cs.out_channels % cs.groups == 0 && cs.out[1] >= 1 && cs.out[2] >= 1 && cs.kernel[1] >= 1 &&
                    cs.kernel[2] >= 1 && cs.stride[1] >= 1 && cs.stride[2] >= 1 && cs.pad[1] >= 0 && cs.pad[2] >= 0;
    if (!ok) throw Napi::RangeError::New(o.Env(), "shape: bad conv shape");
    return cs;
}

ConvAlgo algo_arg(const Napi::Value& v) {
    const std::string name = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
    for (int a = 0; a < conv_algo_count; ++a)
        if (name == conv_algo_name(static_cast<ConvAlgo>(a))) return static_cast<ConvAlgo>(a);
    throw Napi::RangeError::New(v.Env(), "algo: unknown conv algorithm '" + name + "'");
}

}  // namespace

namespace testing_js {

Napi::Value conv_cost(const Napi::CallbackInfo& info) {
    const KernelTable k = kernels_for(isa_arg(info[0]));
    const ConvAlgo a = algo_arg(info[1]);
    Napi::Object holder = Napi::Object::New(info.Env());
    holder.Set("shape", info[2]);
    const ConvShape s = shape_field(holder);
    const ConvCost c = conv_cost(a, s, info[3].As<Napi::Number>().Int64Value(),
                                 info[4].As<Napi::Number>().Int32Value(), k.gemm);
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("workspaceBytes", static_cast<double>(c.workspace_bytes));
    o.Set("flops", static_cast<double>(c.flops));
    o.Set("weightBytes", static_cast<double>(c.weight_bytes));
    return o;
}

Napi::Value conv_run(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const KernelTable k = kernels_for(isa_arg(info[0]));
    const ConvAlgo a = algo_arg(info[1]);
    const Napi::Object o = info[2].As<Napi::Object>();
    const ConvShape s = shape_field(o);
    if (!conv_algo_applies(a, s)) throw Napi::RangeError::New(env, "convRun: the algorithm does not apply");
    const int64_t M = s.out_channels, C = s.in_channels, kvol = s.kernel[1] * s.kernel[2];
    ConvArgs args;
    args.x = floats(o, "x", s.batch * C * s.in[1] * s.in[2]);
    const float* w = floats(o, "w", M * (C / s.groups) * kvol);
    args.bias = floats(o, "bias", M, false);
    args.y = floats(o, "y", s.batch * M * s.out[1] * s.out[2]);
    args.residual = floats(o, "residual", s.batch * M * s.out[1] * s.out[2], false);
    args.act = act_field(o);
    args.slices = int_field(o, "slices", 1);
    args.threads = static_cast<int>(int_field(o, "threads", 1));
    std::vector<float> u;
    args.w = w;
    if (a == ConvAlgo::winograd63 || a == ConvAlgo::winograd23) {
        u.resize(static_cast<size_t>(winograd_filter_floats(a, M, C)));
        (a == ConvAlgo::winograd63 ? winograd_f32_f63_filter__ref : winograd_f32_f23_filter__ref)(w, M, C, u.data());
        args.w = u.data();
    } else if (a == ConvAlgo::taps) {
        u.resize(static_cast<size_t>(M * C * kvol));
        conv_taps_pack_filter(w, M, C, kvol, u.data());
        args.w = u.data();
    } else if (a == ConvAlgo::grouped) {
        u.resize(static_cast<size_t>(M * (C / s.groups) * kvol));
        grouped_pack_filter(w, s.groups, M / s.groups, C / s.groups * kvol, u.data());
        args.w = u.data();
    } else if (a == ConvAlgo::narrow || is_winograd_lean(a)) {
        const int64_t K = C * kvol;
        u.resize(static_cast<size_t>((M + narrow_panel_rows - 1) / narrow_panel_rows * K * narrow_panel_rows));
        gemm_pack_narrow_a(M, K, w, K, u.data());
        args.w = u.data();
    }
    const size_t bytes = static_cast<size_t>(conv_cost(a, s, args.slices, args.threads, k.gemm).workspace_bytes);
    std::vector<uint8_t> ws(bytes + 4 + 64, 0xA5);
    args.workspace = bytes ? ws.data() + 4 : nullptr;
    const Status st = conv_run(k, a, s, args, bytes);
    if (!st.is_ok()) throw Napi::Error::New(env, st.message());
    for (size_t i = bytes + 4; i < ws.size(); ++i)
        if (ws[i] != 0xA5) throw Napi::Error::New(env, "convRun: the kernel wrote past its workspace");
    return Napi::Number::New(env, args.threads);
}

Napi::Value conv_winograd_input(const Napi::CallbackInfo& info) {
    const KernelTable k = kernels_for(isa_arg(info[0]));
    const bool f63 = info[1].As<Napi::Number>().Int32Value() == 63;
    const Napi::Object o = info[2].As<Napi::Object>();
    const int64_t plane = int_field(o, "plane", 0), h = int_field(o, "h", 1), w = int_field(o, "w", 1);
    const int nc = static_cast<int>(int_field(o, "nc", 8)), a = f63 ? 8 : 4;
    const int64_t vs = int_field(o, "vStride", 8);
    if (nc < 0 || nc > 8 || vs < 8 || plane < h * w) throw Napi::RangeError::New(info.Env(), "bad transform arguments");
    const float* x = floats(o, "x", nc > 0 ? (nc - 1) * plane + h * w : 0);
    float* v = floats(o, "v", (a * a - 1) * vs + 8);
    (f63 ? k.conv.f63 : k.conv.f23).input(x, plane, h, w, int_field(o, "iy", 0), int_field(o, "ix", 0), nc, v, vs);
    return info.Env().Undefined();
}

Napi::Value conv_winograd_output(const Napi::CallbackInfo& info) {
    const KernelTable k = kernels_for(isa_arg(info[0]));
    const bool f63 = info[1].As<Napi::Number>().Int32Value() == 63;
    const Napi::Object o = info[2].As<Napi::Object>();
    const int a = f63 ? 8 : 4, mt = a - 2;
    const int64_t ms = int_field(o, "mStride", 8), plane = int_field(o, "plane", 0), w = int_field(o, "w", 1);
    const int rows = static_cast<int>(int_field(o, "rows", mt)), cols = static_cast<int>(int_field(o, "cols", mt));
    const int nc = static_cast<int>(int_field(o, "nc", 8));
    if (nc < 1 || nc > 8 || rows < 1 || rows > mt || cols < 1 || cols > mt || ms < 8 || w < cols || plane < rows * w)
        throw Napi::RangeError::New(info.Env(), "bad transform arguments");
    const float* m = floats(o, "m", (a * a - 1) * ms + 8);
    const float* bias = floats(o, "bias", nc, false);
    float* y = floats(o, "y", (nc - 1) * plane + (rows - 1) * w + cols);
    (f63 ? k.conv.f63 : k.conv.f23).output(m, ms, bias, y, plane, w, rows, cols, nc, act_field(o));
    return info.Env().Undefined();
}

Napi::Value conv_winograd_gemm(const Napi::CallbackInfo& info) {
    const KernelTable k = kernels_for(isa_arg(info[0]));
    const Napi::Object o = info[1].As<Napi::Object>();
    const int64_t kk = int_field(o, "k", 1), as = int_field(o, "aStride", 0), ds = int_field(o, "dStride", 16);
    const int rows = static_cast<int>(int_field(o, "rows", 6));
    if (kk < 1 || rows < 1 || rows > 6 || as < kk || ds < 16) throw Napi::RangeError::New(info.Env(), "bad gemm arguments");
    const float* a = floats(o, "a", (rows - 1) * as + kk);
    const float* b = floats(o, "b", kk * 16);
    float* d = floats(o, "d", (rows - 1) * ds + 16);
    k.conv.winograd_gemm(kk, a, as, b, d, ds, rows);
    return info.Env().Undefined();
}

// convWinogradFilterPanel(isa, 63 | 23, {a, C, u}): one panel's run-time filter transform, a the
// narrow panel [C * 9][16], u the transformed panel [a²][C][16].
Napi::Value conv_winograd_filter_panel(const Napi::CallbackInfo& info) {
    const KernelTable k = kernels_for(isa_arg(info[0]));
    const bool f63 = info[1].As<Napi::Number>().Int32Value() == 63;
    const Napi::Object o = info[2].As<Napi::Object>();
    const int64_t C = int_field(o, "C", 1), a2 = f63 ? 64 : 16;
    if (C < 1) throw Napi::RangeError::New(info.Env(), "bad filter panel arguments");
    const float* a = floats(o, "a", C * 9 * 16);
    float* u = floats(o, "u", a2 * C * 16);
    (f63 ? k.conv.f63 : k.conv.f23).filter_panel(a, C, u);
    return info.Env().Undefined();
}

Napi::Value conv_depthwise(const Napi::CallbackInfo& info) {
    const KernelTable k = kernels_for(isa_arg(info[0]));
    const Napi::Object o = info[1].As<Napi::Object>();
    const Napi::Object s = o.Get("shape").As<Napi::Object>();
    DepthwiseShape d{int_field(s, "channels", 1), int_field(s, "h", 1), int_field(s, "w", 1), int_field(s, "oh", 1), int_field(s, "ow", 1),
                     int_field(s, "stride", 1), int_field(s, "pt", 0), int_field(s, "pl", 0), int_field(s, "yPlane", 0)};
    d.kh = int_field(s, "kh", 3);
    d.kw = int_field(s, "kw", 3);
    d.dilation = int_field(s, "dilation", 1);
    const bool kxk = int_field(o, "kxk", 0) != 0;
    const int64_t p0 = int_field(o, "p0", 0), p1 = int_field(o, "p1", d.channels);
    if ((d.stride != 1 && d.stride != 2) || p0 < 0 || p1 < p0 || d.channels < 1 ||
        (d.y_plane != 0 && d.y_plane < d.oh * d.ow) || d.kh < 1 || d.kw < 1 || d.dilation < 1 ||
        (!kxk && (d.kh != 3 || d.kw != 3 || d.dilation != 1)))
        throw Napi::RangeError::New(info.Env(), "bad depthwise arguments");
    const int64_t c_max = p1 > d.channels ? d.channels : p1;
    const float* x = floats(o, "x", p1 * d.h * d.w);
    const float* w = floats(o, "w", c_max * d.kh * d.kw);
    const float* bias = floats(o, "bias", c_max, false);
    float* y = floats(o, "y", p1 == 0 ? 0 : (p1 - 1) * depthwise_y_plane(d) + d.oh * d.ow);
    (kxk ? k.conv.depthwise_kxk : k.conv.depthwise_3x3)(d, x, w, bias, y, act_field(o), p0, p1);
    return info.Env().Undefined();
}

Napi::Value conv_im2col(const Napi::CallbackInfo& info) {
    const Napi::Object o = info[0].As<Napi::Object>();
    const ConvShape s = shape_field(o);
    const int64_t ch = int_field(o, "channels", s.in_channels), p0 = int_field(o, "p0", 0), p1 = int_field(o, "p1", 0);
    const int64_t nr = int_field(o, "nr", 1), K = ch * s.kernel[1] * s.kernel[2];
    if (p0 < 0 || p1 < p0 || p1 > s.out[1] * s.out[2] || nr < 1) throw Napi::RangeError::New(info.Env(), "bad im2col range");
    const float* x = floats(o, "x", ch * s.in[1] * s.in[2]);
    float* col = floats(o, "col", (p1 - p0 + nr - 1) / nr * K * nr);
    const Napi::Value isa = o.Get("isa");
    const Im2colFn fn = isa.IsString() ? kernels_for(isa_arg(isa)).conv.im2col : im2col_f32__ref;
    fn(s, ch, x, p0, p1, nr, col, int_field(o, "k0", 0), int_field(o, "k1", K));
    return info.Env().Undefined();
}

}  // namespace testing_js

}  // namespace flexpipe
