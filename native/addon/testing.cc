// SPDX-License-Identifier: Apache-2.0
// Builds the `_testing` export: the families' test entry points under their JS names.
#include "addon/testing.h"

#include "runtime/dispatch.h"

namespace flexpipe {

static Napi::Value isas(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Array out = Napi::Array::New(env);
    uint32_t n = 0;
    for (Isa isa : all_isas)
        if (isa_supported(isa)) out.Set(n++, Napi::String::New(env, isa_name(isa)));
    return out;
}

Napi::Object make_testing(Napi::Env env) {
    static const struct {
        const char* name;
        Napi::Value (*fn)(const Napi::CallbackInfo&);
    } functions[] = {
        {"isas", isas},
        {"gemmInfo", testing_js::gemm_info},
        {"gemm", testing_js::gemm},
        {"gemmWorkspaceBytes", testing_js::gemm_workspace_bytes},
        {"convCost", testing_js::conv_cost},
        {"convRun", testing_js::conv_run},
        {"convWinogradInput", testing_js::conv_winograd_input},
        {"convWinogradOutput", testing_js::conv_winograd_output},
        {"convWinogradGemm", testing_js::conv_winograd_gemm},
        {"convWinogradFilterPanel", testing_js::conv_winograd_filter_panel},
        {"convDepthwise", testing_js::conv_depthwise},
        {"convIm2col", testing_js::conv_im2col},
        {"xfAttentionWorkspaceFloats", testing_js::xf_attention_workspace_floats},
        {"xfAttention", testing_js::xf_attention},
        {"xfLayerNormRow", testing_js::xf_layer_norm_row},
        {"xfSoftmax", testing_js::xf_softmax},
        {"xfUnary", testing_js::xf_unary},
        {"xfBinary", testing_js::xf_binary},
        {"xfClip", testing_js::xf_clip},
        {"poolOp", testing_js::pool_op},
        {"resizeWorkspaceBytes", testing_js::resize_workspace_bytes},
        {"allocAudit", testing_js::alloc_audit},
        {"allocAuditReset", testing_js::alloc_audit_reset},
        {"allocAuditProbe", testing_js::alloc_audit_probe},
        {"dequant", testing_js::dequant},
    };
    Napi::Object testing = Napi::Object::New(env);
    for (const auto& f : functions) testing.Set(f.name, Napi::Function::New(env, f.fn));
    return testing;
}

}  // namespace flexpipe
