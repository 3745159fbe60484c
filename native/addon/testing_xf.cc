// SPDX-License-Identifier: Apache-2.0
// _testing entry points of the xf kernel family.
#include "addon/testing.h"

namespace flexpipe {

void add_xf_testing(Napi::Env env, Napi::Object testing) {
    (void)env;
    (void)testing;
}

}  // namespace flexpipe
