// SPDX-License-Identifier: Apache-2.0
// Plan-time weight transforms of the conv family (see runtime/prepack.h).
#include "runtime/prepack.h"

namespace flexpipe {

void register_conv_prepacks(std::vector<PrepackEntry>& table) { (void)table; }

}  // namespace flexpipe
