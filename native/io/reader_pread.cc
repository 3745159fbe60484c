// SPDX-License-Identifier: Apache-2.0
// The portable reader: requests split into chunks, read by a small pool of pread threads.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "io/reader.h"

namespace flexpipe {
namespace {

class PreadReader final : public FileReader {
  public:
    explicit PreadReader(int threads) : threads_(threads < 1 ? 1 : threads) {}

    Status read(int fd, const ReadRequest* requests, size_t n) override {
        // Chunk list: (request index, offset within request). Built per call; reads happen at load
        // time, not inside a compute step.
        std::vector<std::pair<size_t, uint64_t>> chunks;
        for (size_t i = 0; i < n; ++i)
            for (uint64_t off = 0; off < requests[i].length; off += reader_chunk_bytes) chunks.push_back({i, off});
        std::atomic<size_t> next{0};
        std::atomic<int> first_errno{0};
        auto work = [&]() {
            for (size_t k; (k = next.fetch_add(1)) < chunks.size() && first_errno.load() == 0;) {
                const ReadRequest& r = requests[chunks[k].first];
                const uint64_t begin = chunks[k].second;
                const uint64_t len = std::min<uint64_t>(reader_chunk_bytes, r.length - begin);
                int err = read_fully(fd, r.dst + begin, len, r.file_offset + begin);
                if (err != 0) {
                    int expected = 0;
                    first_errno.compare_exchange_strong(expected, err);
                }
            }
        };
        const size_t nt = std::min<size_t>(static_cast<size_t>(threads_), chunks.size());
        std::vector<std::thread> pool;
        for (size_t t = 1; t < nt; ++t) pool.emplace_back(work);
        work();
        for (auto& t : pool) t.join();
        const int err = first_errno.load();
        if (err == -1) return Status::error(StatusCode::io, "failed to read file: unexpected end of file");
        if (err != 0) return Status::error(StatusCode::io, "failed to read file: %s", strerror(err));
        return Status::ok();
    }

    const char* name() const override { return "pread"; }

  private:
    // 0 on success, -1 on end of file, else errno.
    static int read_fully(int fd, uint8_t* dst, uint64_t len, uint64_t offset) {
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

    int threads_;
};

}  // namespace

std::unique_ptr<FileReader> make_pread_reader(int threads) { return std::make_unique<PreadReader>(threads); }

}  // namespace flexpipe
