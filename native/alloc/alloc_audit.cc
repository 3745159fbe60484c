// SPDX-License-Identifier: Apache-2.0
// Allocation audit state and, in FLEXPIPE_ALLOC_AUDIT builds, the --wrap'ed allocation functions.
#include "alloc/alloc_audit.h"

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <new>

namespace flexpipe {
namespace {

std::atomic<int> audit_depth{0};
std::atomic<uint64_t> audit_count{0};
std::atomic<bool> ignored_set{false};
pthread_t ignored_thread;  // written once before ignored_set is published

}  // namespace

bool alloc_audit_enabled() {
#ifdef FLEXPIPE_ALLOC_AUDIT
    return true;
#else
    return false;
#endif
}

uint64_t alloc_audit_count() { return audit_count.load(); }
void alloc_audit_reset() { audit_count.store(0); }

void alloc_audit_ignore_this_thread() {
    if (ignored_set.load()) return;
    ignored_thread = pthread_self();
    ignored_set.store(true);
}

AllocAuditScope::AllocAuditScope() { audit_depth.fetch_add(1); }
AllocAuditScope::~AllocAuditScope() { audit_depth.fetch_sub(1); }

// Called by every wrapped allocation function: no allocation, no locks, no TLS.
void alloc_audit_note() {
    if (audit_depth.load(std::memory_order_relaxed) <= 0) return;
    if (ignored_set.load(std::memory_order_acquire) && pthread_equal(pthread_self(), ignored_thread)) return;
    audit_count.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace flexpipe

#ifdef FLEXPIPE_ALLOC_AUDIT
// The names the linker redirects (-Wl,--wrap=NAME turns our calls to NAME into __wrap_NAME and makes
// __real_NAME the original). The mangled ones are operator new(size_t), new[](size_t) and their
// std::align_val_t forms (checked with nm -C on the built objects).
extern "C" {
void* __real_malloc(size_t size);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t size);
int __real_posix_memalign(void** p, size_t align, size_t size);
void* __real_aligned_alloc(size_t align, size_t size);
void* __real__Znwm(size_t size);
void* __real__Znam(size_t size);
void* __real__ZnwmSt11align_val_t(size_t size, std::align_val_t align);
void* __real__ZnamSt11align_val_t(size_t size, std::align_val_t align);

void* __wrap_malloc(size_t size) {
    flexpipe::alloc_audit_note();
    return __real_malloc(size);
}
void* __wrap_calloc(size_t n, size_t size) {
    flexpipe::alloc_audit_note();
    return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t size) {
    flexpipe::alloc_audit_note();
    return __real_realloc(p, size);
}
int __wrap_posix_memalign(void** p, size_t align, size_t size) {
    flexpipe::alloc_audit_note();
    return __real_posix_memalign(p, align, size);
}
void* __wrap_aligned_alloc(size_t align, size_t size) {
    flexpipe::alloc_audit_note();
    return __real_aligned_alloc(align, size);
}
void* __wrap__Znwm(size_t size) {
    flexpipe::alloc_audit_note();
    return __real__Znwm(size);
}
void* __wrap__Znam(size_t size) {
    flexpipe::alloc_audit_note();
    return __real__Znam(size);
}
void* __wrap__ZnwmSt11align_val_t(size_t size, std::align_val_t align) {
    flexpipe::alloc_audit_note();
    return __real__ZnwmSt11align_val_t(size, align);
}
void* __wrap__ZnamSt11align_val_t(size_t size, std::align_val_t align) {
    flexpipe::alloc_audit_note();
    return __real__ZnamSt11align_val_t(size, align);
}
}
#endif
