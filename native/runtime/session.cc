// SPDX-License-Identifier: Apache-2.0
// Session operations: bounds-checked arena access, program registry, runs and file reads.
#include "runtime/session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace flexpipe {

Session::Session(int threads, const std::string& io_preference) : threads_(threads) {
    reader_ = make_file_reader(io_preference, &reader_note_);
}

Status Session::write(uint64_t offset, const uint8_t* src, size_t bytes) {
    if (!arena_.contains(offset, bytes)) {
        return Status::error(StatusCode::invalid_argument, "failed to write arena: [%llu, +%zu) is outside it (arena=%zu)",
                             static_cast<unsigned long long>(offset), bytes, arena_.size());
    }
    if (bytes) std::memcpy(arena_.base() + offset, src, bytes);
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
    auto p = std::make_unique<Program>();
    FLEXPIPE_RETURN_IF_ERROR(Program::decode(words, n, p.get()));
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
    programs_[static_cast<size_t>(id)].reset();
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

size_t Session::op_count(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= programs_.size() || !programs_[static_cast<size_t>(id)]) return 0;
    return programs_[static_cast<size_t>(id)]->op_count();
}

Status Session::run(int32_t id, uint64_t activation_base, const HostBuffer* inputs, size_t n_in,
                    const HostBuffer* outputs, size_t n_out, double* op_ms) {
    FLEXPIPE_RETURN_IF_ERROR(check_io(id, inputs, n_in));
    FLEXPIPE_RETURN_IF_ERROR(check_io(id, outputs, n_out));
    Program& p = *programs_[static_cast<size_t>(id)];
    FLEXPIPE_RETURN_IF_ERROR(p.bind(arena_, activation_base));
    for (size_t i = 0; i < n_in; ++i) {
        if (inputs[i].bytes) std::memcpy(p.slot(static_cast<size_t>(inputs[i].tensor)).view.data, inputs[i].data, inputs[i].bytes);
    }
    FLEXPIPE_RETURN_IF_ERROR(p.run(threads_, op_ms));
    for (size_t i = 0; i < n_out; ++i) {
        if (outputs[i].bytes) std::memcpy(outputs[i].data, p.slot(static_cast<size_t>(outputs[i].tensor)).view.data, outputs[i].bytes);
    }
    return Status::ok();
}

Status Session::read_file(const std::string& path, const FileRange* ranges, size_t n) {
    std::vector<ReadRequest> requests(n);
    for (size_t i = 0; i < n; ++i) {
        if (!arena_.contains(ranges[i].arena_offset, ranges[i].length)) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to read %s: destination [%llu, +%llu) is outside the arena (arena=%zu)",
                                 path.c_str(), static_cast<unsigned long long>(ranges[i].arena_offset),
                                 static_cast<unsigned long long>(ranges[i].length), arena_.size());
        }
        requests[i] = {ranges[i].file_offset, ranges[i].length, arena_.base() + ranges[i].arena_offset};
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::error(StatusCode::io, "failed to open %s: %s", path.c_str(), strerror(errno));
    struct stat st;
    Status s;
    if (fstat(fd, &st) != 0) {
        s = Status::error(StatusCode::io, "failed to stat %s: %s", path.c_str(), strerror(errno));
    } else {
        for (size_t i = 0; i < n && s.is_ok(); ++i) {
            const uint64_t size = static_cast<uint64_t>(st.st_size);
            if (ranges[i].file_offset > size || ranges[i].length > size - ranges[i].file_offset) {
                s = Status::error(StatusCode::io, "failed to read %s: range [%llu, +%llu) is past its end (size=%llu)",
                                  path.c_str(), static_cast<unsigned long long>(ranges[i].file_offset),
                                  static_cast<unsigned long long>(ranges[i].length), static_cast<unsigned long long>(size));
            }
        }
        if (s.is_ok()) s = reader_->read(fd, requests.data(), n);
        if (!s.is_ok() && s.code() == StatusCode::io) {
            s = Status::error(StatusCode::io, "%s (file=%s)", s.message().c_str(), path.c_str());
        }
    }
    ::close(fd);
    return s;
}

}  // namespace flexpipe
