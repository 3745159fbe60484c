// SPDX-License-Identifier: Apache-2.0
// Read throttle: stretch a read to the time a slower device (an SD card, eMMC) would have taken.
//
// The read runs at full speed and the remainder is slept afterwards, so a throttled load costs
// wall time but no CPU, and the bytes land exactly as an unthrottled read would leave them.
#pragma once

#include <chrono>
#include <cstdint>

namespace flexpipe {

// Sleeps until at least bytes / bandwidth seconds have passed since start (bandwidth in bytes per
// second; <= 0 means unthrottled). Allocates nothing.
void throttle_until(std::chrono::steady_clock::time_point start, uint64_t bytes, double bandwidth);

}  // namespace flexpipe
