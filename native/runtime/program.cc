// SPDX-License-Identifier: Apache-2.0
// Decoding, binding and running programs.
#include "runtime/program.h"

#include <chrono>
#include <cmath>

#include "common/dtype.h"

namespace flexpipe {
namespace {

constexpr int tensor_words = 4 + max_rank;
constexpr double max_exact = 9007199254740992.0;  // 2^53

class Cursor {
  public:
    Cursor(const double* words, size_t n) : words_(words), n_(n) {}
    bool integer(int64_t lo, int64_t hi, int64_t* out) {
        if (pos_ >= n_) return false;
        const double v = words_[pos_++];
        if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) || v != std::floor(v)) return false;
        *out = static_cast<int64_t>(v);
        return true;
    }
    bool real(double* out) {
        if (pos_ >= n_) return false;
        *out = words_[pos_++];
        return true;
    }
    size_t pos() const { return pos_; }
    size_t size() const { return n_; }

  private:
    const double* words_;
    size_t n_;
    size_t pos_ = 0;
};

Status bad(const char* what, size_t at) {
    return Status::error(StatusCode::invalid_argument, "failed to decode program: %s (word=%zu)", what, at);
}

Status decode_tensor(Cursor& c, TensorSlot* slot) {
    int64_t region, offset, dtype, rank;
    if (!c.integer(0, first_host_region + max_host_regions - 1, &region)) {
        return bad("tensor region must be 0 (persistent), 1 (activations) or 2 + an output buffer index", c.pos());
    }
    if (!c.integer(0, static_cast<int64_t>(max_exact), &offset)) return bad("tensor offset out of range", c.pos());
    if (!c.integer(1, 13, &dtype) || !dtype_valid(static_cast<int32_t>(dtype))) {
        return bad("unknown tensor dtype", c.pos());
    }
    if (!c.integer(0, max_rank, &rank)) return bad("tensor rank must be 0..8", c.pos());
    TensorView& v = slot->view;
    v.dtype = static_cast<DType>(dtype);
    v.rank = static_cast<int32_t>(rank);
    double numel = 1;
    for (int i = 0; i < max_rank; ++i) {
        int64_t d;
        if (!c.integer(0, int64_t{1} << 40, &d)) return bad("tensor dim out of range", c.pos());
        if (i < rank) {
            v.dims[i] = d;
            numel *= static_cast<double>(d);
        }
    }
    const double bytes = numel * static_cast<double>(dtype_size(v.dtype));
    if (bytes > max_exact) return bad("tensor too large", c.pos());
    v.numel = static_cast<int64_t>(numel);
    slot->region = static_cast<int32_t>(region);
    slot->offset = static_cast<uint64_t>(offset);
    slot->bytes = static_cast<uint64_t>(bytes);
    return Status::ok();
}

// Upper bounds of a descriptor's op views, ints and floats, read from its op headers ahead of the
// checked pass so that decode reserves once (a header that does not parse ends the count; decode
// then reports it).
struct OpTotals {
    size_t views = 0;
    size_t ints = 0;
    size_t floats = 0;
};

OpTotals op_totals(const double* words, size_t n_words, size_t at, int64_t n_ops) {
    OpTotals t;
    const auto count = [](double v) { return v >= 0 && v <= double{1 << 20} && v == std::floor(v); };
    for (int64_t k = 0; k < n_ops && at + 5 <= n_words; ++k) {
        const double* h = words + at;
        if (!count(h[1]) || !count(h[2]) || !count(h[3]) || !count(h[4])) break;
        const auto n_in = static_cast<size_t>(h[1]), n_out = static_cast<size_t>(h[2]);
        const auto n_ints = static_cast<size_t>(h[3]), n_floats = static_cast<size_t>(h[4]);
        t.views += n_in + n_out;
        t.ints += n_ints;
        t.floats += n_floats;
        at += 5 + n_in + n_out + n_ints + n_floats;
    }
    return t;
}

}  // namespace

void Program::clear() {
    slots_.clear();
    ops_.clear();
    op_tensor_ids_.clear();
    op_views_.clear();
    ints_.clear();
    floats_.clear();
    activation_bytes_ = 0;
    persistent_bytes_ = 0;
}

Status Program::decode(const double* words, size_t n_words, Program* out) {
    Cursor c(words, n_words);
    int64_t version, n_tensors, n_ops;
    if (!c.integer(1, 1, &version)) return bad("unsupported descriptor version", 0);
    if (!c.integer(0, 1 << 24, &n_tensors) || !c.integer(0, 1 << 24, &n_ops)) return bad("bad header", c.pos());
    if (static_cast<size_t>(n_tensors) * tensor_words > n_words) return bad("descriptor truncated", c.pos());
    // Into *out's own vectors: a program decoded into a removed one's storage touches no new pages.
    Program& p = *out;
    p.clear();
    p.slots_.resize(static_cast<size_t>(n_tensors));
    for (auto& slot : p.slots_) {
        FLEXPIPE_RETURN_IF_ERROR(decode_tensor(c, &slot));
        if (slot.region >= first_host_region) continue;  // the caller's buffer, checked by bind()
        const uint64_t end = slot.offset + slot.bytes;
        uint64_t& extent = slot.region == 0 ? p.persistent_bytes_ : p.activation_bytes_;
        if (end > extent) extent = end;
    }
    const auto& table = op_table();
    const OpTotals totals = op_totals(words, n_words, c.pos(), n_ops);
    p.ops_.reserve(static_cast<size_t>(n_ops));
    p.op_tensor_ids_.reserve(totals.views);
    p.op_views_.reserve(totals.views);
    p.ints_.reserve(totals.ints);
    p.floats_.reserve(totals.floats);
    for (int64_t k = 0; k < n_ops; ++k) {
        int64_t code, n_in, n_out, n_ints, n_floats;
        if (!c.integer(0, static_cast<int64_t>(table.size()) - 1, &code)) return bad("unknown op code", c.pos());
        if (!c.integer(0, 4096, &n_in) || !c.integer(0, 4096, &n_out) || !c.integer(0, 1 << 20, &n_ints) ||
            !c.integer(0, 1 << 20, &n_floats)) {
            return bad("bad op header", c.pos());
        }
        OpRecord r;
        r.code = static_cast<int32_t>(code);
        r.views_begin = static_cast<int32_t>(p.op_views_.size());
        r.n_in = static_cast<int32_t>(n_in);
        r.n_out = static_cast<int32_t>(n_out);
        for (int64_t i = 0; i < n_in + n_out; ++i) {
            int64_t id;
            const int64_t lo = i < n_in ? -1 : 0;
            if (!c.integer(lo, n_tensors - 1, &id)) return bad("op tensor id out of range", c.pos());
            p.op_tensor_ids_.push_back(static_cast<int32_t>(id));
            p.op_views_.push_back(id < 0 ? TensorView{} : p.slots_[static_cast<size_t>(id)].view);
        }
        r.ints_begin = static_cast<int32_t>(p.ints_.size());
        r.n_ints = static_cast<int32_t>(n_ints);
        for (int64_t i = 0; i < n_ints; ++i) {
            int64_t v;
            if (!c.integer(-static_cast<int64_t>(max_exact), static_cast<int64_t>(max_exact), &v)) {
                return bad("int attribute is not an exact integer", c.pos());
            }
            p.ints_.push_back(v);
        }
        r.floats_begin = static_cast<int32_t>(p.floats_.size());
        r.n_floats = static_cast<int32_t>(n_floats);
        for (int64_t i = 0; i < n_floats; ++i) {
            double v;
            if (!c.real(&v)) return bad("descriptor truncated in float attributes", c.pos());
            p.floats_.push_back(v);
        }
        p.ops_.push_back(r);
    }
    if (c.pos() != c.size()) return bad("trailing words after the last op", c.pos());
    return Status::ok();
}

Status Program::bind(const Arena& arena, uint64_t activation_base, const HostBuffer* outputs, size_t n_out) {
    for (size_t i = 0; i < slots_.size(); ++i) {
        TensorSlot& s = slots_[i];
        if (s.region >= first_host_region) {
            const size_t k = static_cast<size_t>(s.region - first_host_region);
            if (k >= n_out) {
                return Status::error(StatusCode::invalid_argument,
                                     "failed to bind program: tensor %zu is written into output buffer %zu, but the "
                                     "run was given %zu output buffers",
                                     i, k, n_out);
            }
            if (s.offset > outputs[k].bytes || s.bytes > outputs[k].bytes - s.offset) {
                return Status::error(StatusCode::invalid_argument,
                                     "failed to bind program: tensor %zu [%llu, +%llu) lies outside output buffer %zu "
                                     "(%zu bytes)",
                                     i, static_cast<unsigned long long>(s.offset),
                                     static_cast<unsigned long long>(s.bytes), k, outputs[k].bytes);
            }
            // an empty output may come without memory: point it at the arena, of which it reads nothing
            s.view.data = outputs[k].data ? outputs[k].data + s.offset : arena.base();
            continue;
        }
        const uint64_t base = s.region == 0 ? 0 : activation_base;
        if (base > arena.size() || !arena.contains(base + s.offset, s.bytes)) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to bind program: tensor %zu [%llu, +%llu) lies outside the arena "
                                 "(arena=%zu)",
                                 i, static_cast<unsigned long long>(base + s.offset),
                                 static_cast<unsigned long long>(s.bytes), arena.size());
        }
        s.view.data = arena.base() + base + s.offset;
    }
    for (size_t i = 0; i < slots_.size(); ++i) {
        // kernels load whole elements: every tensor starts at a multiple of its element size
        const TensorSlot& s = slots_[i];
        if (reinterpret_cast<uintptr_t>(s.view.data) % dtype_size(s.view.dtype) != 0) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to bind program: tensor %zu (%s) starts at an address that is not a "
                                 "multiple of its element size",
                                 i, dtype_name(s.view.dtype));
        }
    }
    for (size_t i = 0; i < op_views_.size(); ++i) {
        const int32_t id = op_tensor_ids_[i];
        if (id >= 0) op_views_[i].data = slots_[static_cast<size_t>(id)].view.data;
    }
    return check_overlaps();
}

// Each output of an op and each other tensor of the op either start at the same byte (in place) or do
// not overlap. No plan makes a partial overlap; a kernel given one would read what it has just written
// (and copy between overlapping ranges, which is undefined), so a descriptor with one is refused.
Status Program::check_overlaps() const {
    const auto range = [&](int32_t v, const uint8_t** begin, const uint8_t** end) {
        const int32_t id = op_tensor_ids_[static_cast<size_t>(v)];
        if (id < 0) return false;
        const TensorSlot& s = slots_[static_cast<size_t>(id)];
        *begin = static_cast<const uint8_t*>(s.view.data);
        *end = *begin + s.bytes;
        return s.bytes > 0;
    };
    for (size_t k = 0; k < ops_.size(); ++k) {
        const OpRecord& r = ops_[k];
        for (int32_t o = r.n_in; o < r.n_in + r.n_out; ++o) {
            const uint8_t *ob, *oe;
            if (!range(r.views_begin + o, &ob, &oe)) continue;
            for (int32_t v = 0; v < r.n_in + r.n_out; ++v) {
                const uint8_t *vb, *ve;
                if (v == o || !range(r.views_begin + v, &vb, &ve)) continue;
                if (vb != ob && vb < oe && ob < ve) {
                    return Status::error(StatusCode::invalid_argument,
                                         "failed to bind program: op %zu's %s %d partially overlaps its output %d", k,
                                         v < r.n_in ? "input" : "output", v < r.n_in ? v : v - r.n_in, o - r.n_in);
                }
            }
        }
    }
    return Status::ok();
}

Status Program::run(int threads, size_t op_begin, size_t op_end, double* op_ms, OpGate* gate) const {
    const auto& table = op_table();
    if (op_begin > op_end || op_end > ops_.size()) {
        return Status::error(StatusCode::invalid_argument, "failed to run program: op range [%zu, %zu) outside [0, %zu)",
                             op_begin, op_end, ops_.size());
    }
    for (size_t at = op_begin; at < op_end; ++at) {
        const OpRecord& r = ops_[at];
        if (gate) FLEXPIPE_RETURN_IF_ERROR(gate->before(at));
        const auto start = op_ms ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        OpCall call;
        call.in = op_views_.data() + r.views_begin;
        call.n_in = r.n_in;
        call.out = op_views_.data() + r.views_begin + r.n_in;
        call.n_out = r.n_out;
        call.ints = ints_.data() + r.ints_begin;
        call.n_ints = r.n_ints;
        call.floats = floats_.data() + r.floats_begin;
        call.n_floats = r.n_floats;
        call.threads = threads;
        // An op whose outputs are all empty writes nothing: it is not run (its loops over the other dims,
        // as large as a descriptor may declare them, would compute nothing for as long).
        bool writes = r.n_out == 0;
        for (int32_t o = 0; o < r.n_out && !writes; ++o) writes = call.out[o].numel > 0;
        Status s = writes ? call_op(table[static_cast<size_t>(r.code)], call) : Status::ok();
        if (!s.is_ok()) {
            return Status::error(s.code(), "op %zu (%s): %s", at,
                                 table[static_cast<size_t>(r.code)].name, s.message().c_str());
        }
        if (op_ms) {
            const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
            op_ms[at - op_begin] = took.count();
        }
        if (gate) gate->after(at);
    }
    return Status::ok();
}

}  // namespace flexpipe
