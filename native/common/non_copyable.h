// SPDX-License-Identifier: Apache-2.0
// NonCopyable: the base of classes that own a thread, a buffer or a scope, or are pointed into.
#pragma once

namespace flexpipe {

// Copying (and so moving) a derived object does not compile: a copy would free, join or close twice.
class NonCopyable {
  protected:
    NonCopyable() = default;
    ~NonCopyable() = default;

  public:
    NonCopyable(const NonCopyable&) = delete;
    NonCopyable& operator=(const NonCopyable&) = delete;
};

}  // namespace flexpipe
