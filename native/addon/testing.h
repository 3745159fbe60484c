// SPDX-License-Identifier: Apache-2.0
// `_testing`: entry points for tests only — run one kernel variant of a family on a named ISA.
//
// Each family's functions live in testing_<family>.cc; make_testing (testing.cc) lists them under
// their JS names. Convention: a function takes the ISA name ('ref', 'avx2', 'avx512', 'neon') first and
// throws a RangeError for an ISA this CPU or build cannot run; `_testing.isas()` lists the ISAs
// available here.
#pragma once

#include <napi.h>

namespace flexpipe {

Napi::Object make_testing(Napi::Env env);

namespace testing_js {

// GEMM (testing_gemm.cc).
Napi::Value gemm_info(const Napi::CallbackInfo& info);
Napi::Value gemm(const Napi::CallbackInfo& info);
Napi::Value gemm_workspace_bytes(const Napi::CallbackInfo& info);
// Convolution kernels and drivers (testing_conv.cc).
Napi::Value conv_cost(const Napi::CallbackInfo& info);
Napi::Value conv_run(const Napi::CallbackInfo& info);
Napi::Value conv_winograd_input(const Napi::CallbackInfo& info);
Napi::Value conv_winograd_output(const Napi::CallbackInfo& info);
Napi::Value conv_winograd_gemm(const Napi::CallbackInfo& info);
Napi::Value conv_winograd_filter_panel(const Napi::CallbackInfo& info);
Napi::Value conv_depthwise(const Napi::CallbackInfo& info);
Napi::Value conv_im2col(const Napi::CallbackInfo& info);
// Attention and element-wise kernels (testing_xf.cc).
Napi::Value xf_attention_workspace_floats(const Napi::CallbackInfo& info);
Napi::Value xf_attention(const Napi::CallbackInfo& info);
Napi::Value xf_layer_norm_row(const Napi::CallbackInfo& info);
Napi::Value xf_softmax(const Napi::CallbackInfo& info);
Napi::Value xf_unary(const Napi::CallbackInfo& info);
Napi::Value xf_binary(const Napi::CallbackInfo& info);
Napi::Value xf_clip(const Napi::CallbackInfo& info);
// Pooling and Resize (testing_pool.cc).
Napi::Value pool_op(const Napi::CallbackInfo& info);
Napi::Value resize_workspace_bytes(const Napi::CallbackInfo& info);
// The allocation audit (testing_alloc.cc).
Napi::Value alloc_audit(const Napi::CallbackInfo& info);
Napi::Value alloc_audit_reset(const Napi::CallbackInfo& info);
Napi::Value alloc_audit_probe(const Napi::CallbackInfo& info);
// Dequantization (testing_quant.cc).
Napi::Value dequant(const Napi::CallbackInfo& info);

}  // namespace testing_js

}  // namespace flexpipe
