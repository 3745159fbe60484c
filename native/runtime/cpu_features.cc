// SPDX-License-Identifier: Apache-2.0
// cpuid / getauxval probing and the FLEXPIPE_ISA override.
#include "runtime/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace flexpipe {

CpuFeatures detect_cpu() {
    CpuFeatures f;
#if defined(__x86_64__) || defined(_M_X64)
    f.arch = "x64";
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        f.fma = (c & bit_FMA) != 0;
        f.f16c = (c & bit_F16C) != 0;
        const bool osxsave = (c & bit_OSXSAVE) != 0;
        unsigned lo = 0, hi = 0;
        if (osxsave) __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        const bool ymm_enabled = (lo & 0x6) == 0x6;
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
            f.avx2 = ymm_enabled && (b & bit_AVX2) != 0;
            f.avx512f = ymm_enabled && (lo & 0xe0) == 0xe0 && (b & bit_AVX512F) != 0;
        }
    }
#elif defined(__aarch64__)
    f.arch = "arm64";
    f.neon = true;
#if defined(__linux__) && defined(HWCAP_ASIMDDP)
    f.dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
#endif
    return f;
}

std::string cpu_features_string(const CpuFeatures& cpu) {
    std::string s;
    auto add = [&](bool on, const char* name) {
        if (!on) return;
        if (!s.empty()) s += ",";
        s += name;
    };
    add(cpu.avx2, "avx2");
    add(cpu.fma, "fma");
    add(cpu.f16c, "f16c");
    add(cpu.avx512f, "avx512f");
    add(cpu.neon, "neon");
    add(cpu.dotprod, "dotprod");
    return s;
}

const char* isa_name(Isa isa) {
    switch (isa) {
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
        case Isa::neon: return "neon";
        default: return "ref";
    }
}

static Isa choose_isa() {
    const CpuFeatures cpu = detect_cpu();
    Isa best = Isa::ref;
    if (cpu.avx2 && cpu.fma && cpu.f16c) best = cpu.avx512f ? Isa::avx512 : Isa::avx2;
    if (cpu.neon) best = Isa::neon;
    const char* cap = std::getenv("FLEXPIPE_ISA");
    if (cap != nullptr && std::strcmp(cap, "ref") == 0) return Isa::ref;
    if (cap != nullptr && std::strcmp(cap, "avx2") == 0 && best == Isa::avx512) return Isa::avx2;
    return best;
}

Isa selected_isa() {
    static const Isa isa = choose_isa();
    return isa;
}

}  // namespace flexpipe
