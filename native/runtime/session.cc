// SPDX-License-Identifier: Apache-2.0
// Session operations: bounds-checked arena access, program registry and runs (file reads: session_read.cc).
#include "runtime/session.h"

#include <cstring>

namespace flexpipe {

Session::Session(int threads, const std::string& io_preference) : threads_(threads) {
    reader_ = make_file_reader(io_preference, &reader_note_);
}

Status Session::write(uint64_t offset, const uint8_t* src, size_t bytes) {
    uint8_t* dst = nullptr;
    FLEXPIPE_RETURN_IF_ERROR(arena_span(offset, bytes, &dst));
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::ok();
}

Status Session::arena_span(uint64_t offset, size_t bytes, uint8_t** dst) {
    if (!arena_.contains(offset, bytes)) {
        return Status::error(StatusCode::invalid_argument, "failed to write arena: [%llu, +%zu) is outside it (arena=%zu)",
                             static_cast<unsigned long long>(offset), bytes, arena_.size());
    }
    *dst = arena_.base() + offset;
    return Status::ok();
}

Status Session::read(uint64_t offset, uint8_t* dst, size_t bytes) const {
    if (!arena_.contains(offset, bytes)) {
        return Status::error(StatusCode::invalid_argument, "failed to read arena: [%llu, +%zu) is outside it (arena=%zu)",
                             static_cast<unsigned long long>(offset), bytes, arena_.size());
    }
    if (bytes) std::memcpy(dst, arena_.base() + offset, bytes);
    return Status::ok();
}

Status Session::add_program(const double* words, size_t n, int32_t* id) {
    std::unique_ptr<Program> p = spare_ ? std::move(spare_) : std::make_unique<Program>();
    const Status decoded = Program::decode(words, n, p.get());
    if (!decoded.is_ok()) {
        spare_ = std::move(p);
        return decoded;
    }
    for (size_t i = 0; i < programs_.size(); ++i) {
        if (!programs_[i]) {
            programs_[i] = std::move(p);
            *id = static_cast<int32_t>(i);
            return Status::ok();
        }
    }
    programs_.push_back(std::move(p));
    *id = static_cast<int32_t>(programs_.size() - 1);
    return Status::ok();
}

Status Session::remove_program(int32_t id) {
    if (id < 0 || static_cast<size_t>(id) >= programs_.size() || !programs_[static_cast<size_t>(id)]) {
        return Status::error(StatusCode::invalid_argument, "failed to remove program: no program %d", id);
    }
    spare_ = std::move(programs_[static_cast<size_t>(id)]);
    return Status::ok();
}

Status Session::check_io(int32_t id, const HostBuffer* buffers, size_t n) const {
    if (id < 0 || static_cast<size_t>(id) >= programs_.size() || !programs_[static_cast<size_t>(id)]) {
        return Status::error(StatusCode::invalid_argument, "failed to run program: no program %d", id);
    }
    const Program& p = *programs_[static_cast<size_t>(id)];
    for (size_t i = 0; i < n; ++i) {
        const HostBuffer& b = buffers[i];
        if (b.tensor < 0 || static_cast<size_t>(b.tensor) >= p.tensor_count()) {
            return Status::error(StatusCode::invalid_argument, "failed to run program: no tensor %d", b.tensor);
        }
        const uint64_t want = p.slot(static_cast<size_t>(b.tensor)).bytes;
        if (b.bytes != want) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run program: buffer for tensor %d has %zu bytes (expected %llu)",
                                 b.tensor, b.bytes, static_cast<unsigned long long>(want));
        }
    }
    return Status::ok();
}

Status Session::check_range(int32_t id, int64_t op_begin, int64_t op_end) const {
    const auto n = static_cast<int64_t>(op_count(id));
    if (op_begin < 0 || op_begin > op_end || op_end > n) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run program %d: op range [%lld, %lld) must satisfy 0 <= opBegin <= opEnd <= %lld",
                             id, static_cast<long long>(op_begin), static_cast<long long>(op_end),
                             static_cast<long long>(n));
    }
    return Status::ok();
}

size_t Session::op_count(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= programs_.size() || !programs_[static_cast<size_t>(id)]) return 0;
    return programs_[static_cast<size_t>(id)]->op_count();
}

Status Session::run(int32_t id, uint64_t activation_base, const HostBuffer* inputs, size_t n_in,
                    const HostBuffer* outputs, size_t n_out, size_t op_begin, size_t op_end, double* op_ms,
                    OpGate* gate) {
    FLEXPIPE_RETURN_IF_ERROR(check_io(id, inputs, n_in));
    FLEXPIPE_RETURN_IF_ERROR(check_io(id, outputs, n_out));
    FLEXPIPE_RETURN_IF_ERROR(check_range(id, static_cast<int64_t>(op_begin), static_cast<int64_t>(op_end)));
    Program& p = *programs_[static_cast<size_t>(id)];
    // An output the ops write in place (region 2 + k) must be given as outputs[k]: a buffer elsewhere
    // in the list would be bound to another output's tensors.
    for (size_t i = 0; i < n_out; ++i) {
        const int32_t region = p.slot(static_cast<size_t>(outputs[i].tensor)).region;
        if (region >= first_host_region && static_cast<size_t>(region - first_host_region) != i) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run program: output %zu (tensor %d) is written in place into output "
                                 "buffer %d; pass it at that position",
                                 i, outputs[i].tensor, region - first_host_region);
        }
    }
    FLEXPIPE_RETURN_IF_ERROR(p.bind(arena_, activation_base, outputs, n_out));
    for (size_t i = 0; i < n_in; ++i) {
        if (inputs[i].bytes) std::memcpy(p.slot(static_cast<size_t>(inputs[i].tensor)).view.data, inputs[i].data, inputs[i].bytes);
    }
    FLEXPIPE_RETURN_IF_ERROR(p.run(threads_, op_begin, op_end, op_ms, gate));
    for (size_t i = 0; i < n_out; ++i) {
        const auto* src = static_cast<const uint8_t*>(p.slot(static_cast<size_t>(outputs[i].tensor)).view.data);
        if (outputs[i].bytes && src != outputs[i].data) std::memcpy(outputs[i].data, src, outputs[i].bytes);
    }
    return Status::ok();
}

}  // namespace flexpipe
