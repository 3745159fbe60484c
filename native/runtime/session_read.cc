// SPDX-License-Identifier: Apache-2.0
// Session::read_file: file ranges into the arena, with optional O_DIRECT and a bandwidth throttle.
//
// O_DIRECT needs the file offset, the length and the destination address of every range on
// io_alignment (4 KiB). When the caller asks for it and any range is not aligned, or the file
// system refuses the flag (EINVAL: tmpfs, some overlay and network file systems), this call reads
// through the page cache instead and reports direct = false. Nothing here allocates: the request
// list lives in caller-owned scratch and errors build their message only on the failure path.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/align.h"
#include "io/throttle.h"
#include "runtime/session.h"

namespace flexpipe {
namespace {

// "ENOENT"-style name where the C library has one, else the number.
const char* errno_name(int err, char* buf, size_t n) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (const char* name = strerrorname_np(err)) return name;
#endif
    snprintf(buf, n, "%d", err);
    return buf;
}

Status open_error(const std::string& path, int err) {
    char num[16];
    return Status::error(StatusCode::io, "failed to open %s: %s (errno=%s)", path.c_str(), strerror(err),
                         errno_name(err, num, sizeof(num)));
}

bool aligned(uint64_t v) { return v % io_alignment == 0; }

// Opens path for reading: with O_DIRECT when wanted, falling back to buffered on EINVAL.
Status open_for_read(const std::string& path, bool want_direct, int* fd, bool* direct) {
    *direct = false;
#ifdef O_DIRECT
    if (want_direct) {
        *fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
        if (*fd >= 0) {
            *direct = true;
            return Status::ok();
        }
        if (errno != EINVAL) return open_error(path, errno);
    }
#endif
    *fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (*fd < 0) return open_error(path, errno);
    return Status::ok();
}

// Every range must end inside the file as it is now (a shrunk package fails here, not mid-read).
Status check_file_size(int fd, const std::string& path, const FileRange* ranges, size_t n) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        const int err = errno;
        char num[16];
        return Status::error(StatusCode::io, "failed to stat %s: %s (errno=%s)", path.c_str(), strerror(err),
                             errno_name(err, num, sizeof(num)));
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    for (size_t i = 0; i < n; ++i) {
        if (ranges[i].file_offset > size || ranges[i].length > size - ranges[i].file_offset) {
            return Status::error(StatusCode::io,
                                 "failed to read %s: unexpected end of file: range [%llu, +%llu) is past its end "
                                 "(size=%llu)",
                                 path.c_str(), static_cast<unsigned long long>(ranges[i].file_offset),
                                 static_cast<unsigned long long>(ranges[i].length),
                                 static_cast<unsigned long long>(size));
        }
    }
    return Status::ok();
}

}  // namespace

Status Session::read_file(const std::string& path, const FileRange* ranges, size_t n, const ReadOptions& options,
                          ReadRequest* scratch, ReadResult* result, ReadGate* gate) {
    if (!options.geometry.valid()) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to read %s: read geometry %llu bytes x %d is outside 4 KiB multiples up to "
                             "64 MiB x 1..64",
                             path.c_str(), static_cast<unsigned long long>(options.geometry.chunk_bytes),
                             options.geometry.queue_depth);
    }
    const auto start = std::chrono::steady_clock::now();
    uint64_t total = 0;
    bool all_aligned = true;
    for (size_t i = 0; i < n; ++i) {
        const FileRange& r = ranges[i];
        if (!arena_.contains(r.arena_offset, r.length)) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to read %s: destination [%llu, +%llu) is outside the arena (arena=%zu)",
                                 path.c_str(), static_cast<unsigned long long>(r.arena_offset),
                                 static_cast<unsigned long long>(r.length), arena_.size());
        }
        scratch[i] = {r.file_offset, r.length, arena_.base() + r.arena_offset};
        total += r.length;
        all_aligned = all_aligned && aligned(r.file_offset) && aligned(r.length) &&
                      aligned(reinterpret_cast<uintptr_t>(scratch[i].dst));
    }
    int fd = -1;
    bool direct = false;
    FLEXPIPE_RETURN_IF_ERROR(open_for_read(path, options.direct && all_aligned, &fd, &direct));
    Status s = check_file_size(fd, path, ranges, n);
    if (s.is_ok()) {
        s = reader_->read(fd, scratch, n, options.geometry, gate);
        if (!s.is_ok()) s = Status::error(s.code(), "%s (file=%s)", s.message().c_str(), path.c_str());
    }
    ::close(fd);
    FLEXPIPE_RETURN_IF_ERROR(s);
    if (!gate) throttle_until(start, total, options.bandwidth);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    result->direct = direct;
    result->bytes = total;
    result->ms = took.count();
    bytes_read_.fetch_add(total);
    if (direct) direct_reads_.fetch_add(1);
    return Status::ok();
}

}  // namespace flexpipe
