// SPDX-License-Identifier: Apache-2.0
// Sleeping out the remainder of a throttled read.
#include "io/throttle.h"

#include <thread>

namespace flexpipe {

void throttle_until(std::chrono::steady_clock::time_point start, uint64_t bytes, double bandwidth) {
    if (!(bandwidth > 0)) return;
    const std::chrono::duration<double> need(static_cast<double>(bytes) / bandwidth);
    const auto until = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(need);
    // sleep_until may wake early on some clocks; loop until the deadline really passed.
    while (std::chrono::steady_clock::now() < until) std::this_thread::sleep_until(until);
}

}  // namespace flexpipe
