// SPDX-License-Identifier: Apache-2.0
// Names of status codes, as the addon reports them to JavaScript.
#include "common/status.h"

namespace flexpipe {

const char* status_code_name(StatusCode code) {
    switch (code) {
        case StatusCode::ok: return "ok";
        case StatusCode::invalid_argument: return "invalid_argument";
        case StatusCode::shape_mismatch: return "shape_mismatch";
        case StatusCode::unsupported: return "unsupported";
        case StatusCode::out_of_memory: return "out_of_memory";
        case StatusCode::io: return "io";
        case StatusCode::cancelled: return "cancelled";
        case StatusCode::internal: return "internal";
    }
    return "unknown";
}

}  // namespace flexpipe
