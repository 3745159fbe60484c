// SPDX-License-Identifier: Apache-2.0
// Allocation audit: counts heap allocations made by flexpipe's own code while a run or a file read
// is in progress, to prove the inference path allocates nothing.
//
// How it works: the audit build (cmake-js with FLEXPIPE_ALLOC_AUDIT=1, see CMakeLists.txt) links the
// addon with -Wl,--wrap for malloc, calloc, realloc, posix_memalign, aligned_alloc and the four
// operator new forms, so every call to them *from an object file of this addon* goes to a __wrap_
// function in alloc_audit.cc that counts it and forwards to the real one. Workers open an
// AllocAuditScope around their Execute work; while any scope is open (a process-wide depth, since a
// run's OpenMP threads allocate on other threads), every wrapped call counts, except on the JS thread
// (alloc_audit_ignore_this_thread, called at module init), which may be in an unrelated method while a
// worker runs. Not counted: allocations inside libgomp, libstdc++ (out-of-line members such as
// std::string growth), liburing or libc themselves, because --wrap only rewrites our references; and
// free/delete, because releasing memory is not what the audit is about.
// In every other build the functions exist, alloc_audit_enabled() is false and the count stays 0.
#pragma once

#include <cstdint>

#include "common/non_copyable.h"

namespace flexpipe {

bool alloc_audit_enabled();
// Allocations counted since the last reset.
uint64_t alloc_audit_count();
void alloc_audit_reset();
// Allocations on the calling thread are never counted (the JS thread).
void alloc_audit_ignore_this_thread();
// Counts one allocation if a scope is open and this is not the ignored thread (the __wrap_ hooks).
void alloc_audit_note();

// Counts allocations (on any thread but the ignored one) while at least one scope is open.
class AllocAuditScope : NonCopyable {
  public:
    AllocAuditScope();
    ~AllocAuditScope();
};

}  // namespace flexpipe
