// SPDX-License-Identifier: Apache-2.0
// GEMM benchmark program: flexpipe's packed-panel driver vs OpenBLAS cblas_sgemm, same process, same
// data. Built and run by bench/kernels/gemm.bench.ts (never part of the addon: only this program
// links OpenBLAS). Shapes are M x K x N: C[M, N] = A[M, K] · B[K, N], all row-major.
//   gemm_bench --shapes 1024x1024x1024,128x768x768 --threads 1,2 --runs 30 --warmup 5
//              [--mc N --kc N --nc N: override the table's blocking, for tuning] [--no-blas 1]
//              [--cpu-time 1: time with the calling thread's CPU clock, which a busy machine's
//               preemption does not inflate; meaningful for 1 thread only, for tuning]
// Ours: B packed once before timing (an offline weight transform); A packing is timed. OpenBLAS packs
// both inside cblas_sgemm. Per shape and thread count the two alternate in rounds of 5 calls (see
// main). Prints one JSON line per (impl, shape, threads): median, min, GFLOP/s of the median, and the
// median over rounds of OpenBLAS time / our time (paired_speedup; > 1 means we are faster).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <ctime>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/gemm_driver.h"

extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);

namespace {

using flexpipe::GemmProblem;

std::vector<long> split_longs(const std::string& s, char sep) {
    std::vector<long> out;
    size_t i = 0;
    while (i <= s.size()) {
        size_t j = s.find(sep, i);
        if (j == std::string::npos) j = s.size();
        if (j > i) out.push_back(std::atol(s.substr(i, j - i).c_str()));
        i = j + 1;
    }
    return out;
}

bool cpu_clock = false;

double now_ms() {
    if (cpu_clock) {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Case {
    long m, k, n;
    int threads;
};

}  // namespace

int main(int argc, char** argv) {
    std::string shapes = "1024x1024x1024,128x768x768,128x768x3072,128x3072x768", threads_arg = "1,2";
    int runs = 30, warmup = 5, mc = 0, kc = 0, nc = 0;
    bool no_blas = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string f = argv[i];
        if (f == "--shapes") shapes = argv[i + 1];
        else if (f == "--threads") threads_arg = argv[i + 1];
        else if (f == "--runs") runs = std::atoi(argv[i + 1]);
        else if (f == "--warmup") warmup = std::atoi(argv[i + 1]);
        else if (f == "--mc") mc = std::atoi(argv[i + 1]);
        else if (f == "--kc") kc = std::atoi(argv[i + 1]);
        else if (f == "--nc") nc = std::atoi(argv[i + 1]);
        else if (f == "--no-blas") no_blas = std::atoi(argv[i + 1]) != 0;
        else if (f == "--cpu-time") cpu_clock = std::atoi(argv[i + 1]) != 0;
    }
    const flexpipe::KernelTable& table = flexpipe::kernels();
    flexpipe::GemmKernels g = table.gemm;
    if (mc > 0) g.mc = mc;
    if (kc > 0) g.kc = kc;
    if (nc > 0) g.nc = nc;
    std::printf("{\"info\":true,\"isa\":\"%s\",\"mr\":%d,\"nr\":%d,\"mc\":%d,\"kc\":%d,\"nc\":%d,\"openblas\":\"%s\"}\n",
                flexpipe::isa_name(table.isa), g.mr, g.nr, g.mc, g.kc, g.nc, openblas_get_corename());
    std::vector<Case> cases;
    size_t start = 0;
    while (start < shapes.size()) {
        size_t end = shapes.find(',', start);
        if (end == std::string::npos) end = shapes.size();
        const std::vector<long> d = split_longs(shapes.substr(start, end - start), 'x');
        if (d.size() == 3)
            for (long t : split_longs(threads_arg, ',')) cases.push_back({d[0], d[1], d[2], static_cast<int>(t)});
        start = end + 1;
    }
    for (const Case& cs : cases) {
        const long m = cs.m, k = cs.k, n = cs.n;
        std::vector<float> a(m * k), b(k * n), c_ours(m * n), c_blas(m * n);
        unsigned s = 12345;
        for (float& x : a) x = (s = s * 1664525u + 1013904223u, (s >> 8) * (1.0f / 16777216.0f) - 0.5f);
        for (float& x : b) x = (s = s * 1664525u + 1013904223u, (s >> 8) * (1.0f / 16777216.0f) - 0.5f);
        std::vector<float> packed(flexpipe::gemm_packed_b_floats(k, n, g.nr) + 16);
        float* pb = packed.data() + (16 - (reinterpret_cast<uintptr_t>(packed.data()) / 4) % 16) % 16;  // 64-byte aligned
        flexpipe::gemm_pack_b(g, b.data(), n, 1, k, 0, n, pb);
        GemmProblem p;
        p.k = k, p.a = a.data(), p.a_rs = k;
        p.b_packed = flexpipe::GemmPackedB{pb, k, 0, n, g.nr};
        p.c = c_ours.data(), p.c_rs = n, p.m1 = m, p.n1 = n;
        std::vector<unsigned char> ws(flexpipe::gemm_workspace_bytes(g, p, cs.threads));
        auto ours = [&] {
            const flexpipe::Status st = flexpipe::gemm_run(g, p, ws.data(), ws.size(), cs.threads);
            if (!st.is_ok()) {
                std::fprintf(stderr, "gemm_run: %s\n", st.message().c_str());
                std::exit(1);
            }
        };
        openblas_set_num_threads(cs.threads);
        auto blas = [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                        c_blas.data(), n);
        };
        // Rounds of `chunk` timed calls per library (after `warmup` untimed ones in the first round and
        // one in later rounds, which re-warms the caches the other library used), alternating which
        // goes first; a pause after each block lets that library's workers stop polling.
        // Interleaving this finely lets both see the same machine load; paired holds, per round,
        // OpenBLAS's median time over ours.
        constexpr int chunk = 5;
        std::vector<double> t_ours, t_blas, paired;
        int warm = warmup;
        auto block = [&](auto&& fn, std::vector<double>& times, int n, int pause_ms) {
            for (int r = 0; r < std::max(warm, 1); ++r) fn();
            for (int r = 0; r < n; ++r) {
                const double t0 = now_ms();
                fn();
                times.push_back(now_ms() - t0);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
        };
        // OpenBLAS workers keep polling (sched_yield) for about 2^28 cycles (~0.1 s) after a call and
        // libgomp's spin for GOMP_SPINCOUNT iterations: a 250 ms pause after either library's block
        // means the other never runs beside polling workers. Each block's first (untimed) call pays
        // the wake-up of sleeping workers.
        auto ours_block = [&](std::vector<double>& times, int n) { block(ours, times, n, 250); };
        auto blas_block = [&](std::vector<double>& times, int n) { block(blas, times, n, 250); };
        for (int done = 0, round = 0; done < runs; done += chunk, ++round) {
            const int n = std::min(chunk, runs - done);
            std::vector<double> r_ours, r_blas;
            if (no_blas) {
                ours_block(r_ours, n);
            } else if (round % 2 == 0) {
                ours_block(r_ours, n);
                blas_block(r_blas, n);
            } else {
                blas_block(r_blas, n);
                ours_block(r_ours, n);
            }
            t_ours.insert(t_ours.end(), r_ours.begin(), r_ours.end());
            t_blas.insert(t_blas.end(), r_blas.begin(), r_blas.end());
            if (!no_blas) paired.push_back(median(r_blas) / median(r_ours));
            warm = 1;
        }
        if (no_blas) blas();
        double max_diff = 0, max_ref = 0;
        for (long i = 0; i < m * n; ++i) {
            max_diff = std::max(max_diff, static_cast<double>(std::fabs(c_ours[i] - c_blas[i])));
            max_ref = std::max(max_ref, static_cast<double>(std::fabs(c_blas[i])));
        }
        const double flop = 2.0 * m * n * k;
        for (int which = 0; which < 2; ++which) {
            const std::vector<double>& t = which == 0 ? t_ours : t_blas;
            if (t.empty()) continue;
            const double p50 = median(t);
            std::printf("{\"impl\":\"%s\",\"m\":%ld,\"k\":%ld,\"n\":%ld,\"threads\":%d,\"runs\":%zu,\"p50_ms\":%.4f,"
                        "\"min_ms\":%.4f,\"gflops\":%.2f,\"max_rel_diff\":%.3g,\"paired_speedup\":%.3f}\n",
                        which == 0 ? "flexpipe" : "openblas", m, k, n, cs.threads, t.size(), p50,
                        *std::min_element(t.begin(), t.end()), flop / (p50 * 1e6), max_diff / std::max(max_ref, 1e-30),
                        paired.empty() ? 0.0 : median(paired));
            std::fflush(stdout);
        }
    }
    return 0;
}
