// SPDX-License-Identifier: Apache-2.0
// CPU feature detection and the ISA choice: the only place that knows about CPUs.
//
// On x86-64 the ISA is chosen at run time (cpuid): avx512 (AVX-512F with AVX2+FMA+F16C), else avx2,
// else ref; on aarch64 NEON is the build baseline. FLEXPIPE_ISA=ref (any CPU) or FLEXPIPE_ISA=avx2 (an
// AVX-512 CPU) caps the choice (read once), so CI can force each kernel path; tests reach every
// supported ISA through kernels_for(isa).
#pragma once

#include <string>

namespace flexpipe {

enum class Isa : int { ref = 0, avx2 = 1, neon = 2, avx512 = 3 };

// Every ISA, in the order tests list them.
constexpr Isa all_isas[] = {Isa::ref, Isa::avx2, Isa::avx512, Isa::neon};

struct CpuFeatures {
    const char* arch = "unknown";
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool neon = false;
    bool dotprod = false;
};

CpuFeatures detect_cpu();
std::string cpu_features_string(const CpuFeatures& cpu);
// The best ISA this CPU supports, capped by FLEXPIPE_ISA; computed once.
Isa selected_isa();
const char* isa_name(Isa isa);

}  // namespace flexpipe
