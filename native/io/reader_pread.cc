// SPDX-License-Identifier: Apache-2.0
// The portable reader: requests split into chunks, read by geometry.queue_depth pread threads (at most
// pread_threads_max) started per call. A gated read (ReadGate) hands out a request's first chunk only
// once its gate is open; a thread that finds it closed waits in the gate, outside the cursor's lock.
//
// Threads are raw pthreads sharing one stack-held context, so a read allocates nothing from this
// code (std::thread would allocate its state with operator new).
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "io/reader.h"

namespace flexpipe {
namespace {

constexpr int pread_threads_max = 16;

// 0 on success, -1 on end of file, else errno.
int read_fully(int fd, uint8_t* dst, uint64_t len, uint64_t offset) {
    while (len > 0) {
        const ssize_t got = ::pread(fd, dst, len, static_cast<off_t>(offset));
        if (got < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (got == 0) return -1;
        dst += got;
        len -= static_cast<uint64_t>(got);
        offset += static_cast<uint64_t>(got);
    }
    return 0;
}

struct PreadJob {
    int fd;
    ReadGate* gate;
    ChunkCursor cursor;
    std::mutex mu;  // guards cursor
    std::atomic<int> first_errno{0};
    std::atomic<bool> stopped{false};  // the gate stopped the pipeline

    PreadJob(int f, const ReadRequest* requests, size_t n, uint64_t chunk_bytes, ReadGate* g)
        : fd(f), gate(g), cursor(requests, n, chunk_bytes) {}
    // The next chunk to read; false when none is left or the read ends.
    bool take(ReadRequest* chunk, size_t* request) {
        for (;;) {
            if (first_errno.load() != 0 || stopped.load()) return false;
            size_t waiting = 0;
            {
                std::lock_guard<std::mutex> lock(mu);
                bool first = false;
                if (!cursor.peek(request, &first)) return false;
                if (!gate || !first || gate->ready(*request)) return cursor.next(chunk, request);
                waiting = *request;
            }
            if (!gate->wait_ready(waiting)) {
                stopped.store(true);
                return false;
            }
        }
    }
    void work() {
        ReadRequest chunk;
        size_t request = 0;
        while (take(&chunk, &request)) {
            const int err = read_fully(fd, chunk.dst, chunk.length, chunk.file_offset);
            if (err != 0) {
                int expected = 0;
                first_errno.compare_exchange_strong(expected, err);
            } else if (gate) {
                gate->read_bytes(request, chunk.length);
            }
        }
    }
    static void* thread_main(void* self) {
        static_cast<PreadJob*>(self)->work();
        return nullptr;
    }
};

class PreadReader final : public FileReader {
  public:
    Status read(int fd, const ReadRequest* requests, size_t n, const ReadGeometry& geometry, ReadGate* gate) override {
        PreadJob job(fd, requests, n, geometry.chunk_bytes, gate);
        const int threads = geometry.queue_depth > pread_threads_max ? pread_threads_max : geometry.queue_depth;
        const uint64_t chunks = ChunkCursor::count(requests, n, geometry.chunk_bytes);
        const int want = static_cast<int>(chunks < static_cast<uint64_t>(threads) ? chunks : threads);
        pthread_t pool[pread_threads_max];
        int started = 0;
        // A thread that cannot start only means fewer readers; the calling thread always works.
        for (int t = 1; t < want; ++t)
            if (pthread_create(&pool[started], nullptr, &PreadJob::thread_main, &job) == 0) ++started;
        job.work();
        for (int t = 0; t < started; ++t) pthread_join(pool[t], nullptr);
        const int err = job.first_errno.load();
        if (err == -1) return Status::error(StatusCode::io, "failed to read file: unexpected end of file");
        if (err != 0) return Status::error(StatusCode::io, "failed to read file: %s (errno=%d)", strerror(err), err);
        if (job.stopped.load()) return Status::error(StatusCode::cancelled, "failed to read file: the pipeline stopped");
        return Status::ok();
    }

    const char* name() const override { return "pread"; }
};

}  // namespace

std::unique_ptr<FileReader> make_pread_reader() { return std::make_unique<PreadReader>(); }

}  // namespace flexpipe
