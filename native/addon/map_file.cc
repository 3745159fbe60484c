// SPDX-License-Identifier: Apache-2.0
// mapFile: mmap + an external ArrayBuffer whose finalizer unmaps.
#include "addon/map_file.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__) || defined(__APPLE__)
#include <sys/mman.h>
#define FLEXPIPE_HAS_MMAP 1
#endif

#include "addon/convert.h"

namespace flexpipe {

static Napi::Error io_error(Napi::Env env, const std::string& what, int err) {
    Napi::Error e = Napi::Error::New(env, what + ": " + std::strerror(err));
    e.Set("code", Napi::String::New(env, "ERR_FLEXPIPE_IO"));
    return e;
}

namespace {

// Marks the ArrayBuffers mapFile made, so that unmapFile never replaces memory it did not map.
constexpr napi_type_tag mapped_file_tag = {0x6d617070656466ULL, 0x666c657870697065ULL};

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

Napi::Value map_file(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const std::string path = string_arg(info[0], "path");
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throw io_error(env, "failed to open " + path, errno);
    struct stat st;
    if (::fstat(f.fd, &st) != 0) throw io_error(env, "failed to stat " + path, errno);
    if (!S_ISREG(st.st_mode)) throw io_error(env, "failed to map " + path, EINVAL);
    const auto size = static_cast<size_t>(st.st_size);
    if (size == 0) return Napi::ArrayBuffer::New(env, 0);
#ifdef FLEXPIPE_HAS_MMAP
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd, 0);
    if (p == MAP_FAILED) throw io_error(env, "failed to map " + path, errno);
    ::madvise(p, size, MADV_WILLNEED);
    // The mapping is as large as the model: V8 is told, so that once JavaScript lets go of every view
    // (lib/runtime/engine.ts detaches the graph after the first plan) a collection unmaps it soon,
    // rather than whenever the small JS heap next needs one.
    Napi::MemoryManagement::AdjustExternalMemory(env, static_cast<int64_t>(size));
    Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, p, size, [size](Napi::Env e, void* data) {
        ::munmap(data, size);
        Napi::MemoryManagement::AdjustExternalMemory(e, -static_cast<int64_t>(size));
    });
    buffer.TypeTag(&mapped_file_tag);
    return buffer;
#else
    Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, size);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(f.fd, static_cast<uint8_t*>(buffer.Data()) + done, size - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw io_error(env, "failed to read " + path, n < 0 ? errno : EIO);
        done += static_cast<size_t>(n);
    }
    return buffer;
#endif
}

Napi::Value unmap_file(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsArrayBuffer()) throw Napi::TypeError::New(env, "unmapFile: expected the ArrayBuffer of mapFile");
    Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
    if (!buffer.CheckTypeTag(&mapped_file_tag)) throw Napi::TypeError::New(env, "unmapFile: the ArrayBuffer did not come from mapFile");
    const size_t size = buffer.ByteLength();
    if (size == 0 || buffer.IsDetached()) return Napi::Boolean::New(env, false);  // empty, or released already
    void* data = buffer.Data();
    buffer.Detach();  // every view of it now has length 0: nothing can read the range below again
#ifdef FLEXPIPE_HAS_MMAP
    // The range stays reserved (no access, no pages) until the finalizer unmaps it, so that the
    // address is not reused while the ArrayBuffer object is alive.
    if (::mmap(data, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
        throw io_error(env, "failed to release a file mapping", errno);
    }
#else
    (void)data;
#endif
    return Napi::Boolean::New(env, true);
}

}  // namespace flexpipe
