// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (issue 40): the program descriptor of native/runtime/program.h, decoded, bound against
// a small arena and run, from arbitrary bytes. Each byte is one word, a small signed integer, so that
// codes, ranks, dims, offsets and ids land in range often enough for programs to decode, bind and reach
// the ops' own argument checks. Byte 0 picks a mode:
//   bit 0   the header is forced to [1, n_tensors, n_ops] (else it is fuzzed too)
//   bit 1   the program is removed and a second one decoded into its storage (Session's spare)
// Every decoded program that binds runs all its ops on one thread: each must either compute within its
// tensors or return an error, never read or write past them (ASan) or hit undefined behaviour (UBSan).
//
//   node scripts/fuzz/build-native.mjs && .cache/fuzz/program_fuzz test/fuzz/corpus/program -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/session.h"

namespace {

constexpr uint64_t arena_bytes = 1 << 14;

std::vector<double> words_of(const uint8_t* data, size_t size, bool header) {
    std::vector<double> w;
    w.reserve(size + 3);
    size_t at = 0;
    if (header && size >= 2) {
        w.push_back(1);
        w.push_back(data[0] % 16);  // tensors
        w.push_back(data[1] % 8);   // ops
        at = 2;
    }
    for (; at < size; ++at) w.push_back(static_cast<int8_t>(data[at]));
    return w;
}

void decode_and_run(flexpipe::Session& s, const std::vector<double>& words) {
    int32_t id = -1;
    if (!s.add_program(words.data(), words.size(), &id).is_ok()) return;
    // no host buffers: a program that writes an output in place (region 2 + k) fails to bind
    (void)s.run(id, 0, nullptr, 0, nullptr, 0, 0, s.op_count(id));
    (void)s.remove_program(id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    static flexpipe::Session* session = [] {
        auto* s = new flexpipe::Session(1, "pread");
        (void)s->resize(arena_bytes, 0);
        return s;
    }();
    const uint8_t mode = data[0];
    const std::vector<double> words = words_of(data + 1, size - 1, (mode & 1) != 0);
    std::memset(session->arena().base(), 0, arena_bytes);
    decode_and_run(*session, words);
    if (mode & 2) {
        // the storage the first one left behind: decode a shifted copy into it
        std::vector<double> again(words.begin() + (words.size() > 3 ? 3 : 0), words.end());
        if (again.size() >= 3) again[0] = 1;
        decode_and_run(*session, again);
    }
    return 0;
}
