// SPDX-License-Identifier: Apache-2.0
// The io_uring reader (liburing): chunked reads kept reader_queue_depth deep, short reads resubmitted.
#include <liburing.h>

#include <cstring>
#include <vector>

#include "io/reader.h"

namespace flexpipe {
namespace {

struct Chunk {
    uint8_t* dst;
    uint64_t offset;
    uint64_t remaining;
};

class UringReader final : public FileReader {
  public:
    ~UringReader() override { io_uring_queue_exit(&ring_); }
    static std::unique_ptr<UringReader> create(std::string* why) {
        auto r = std::unique_ptr<UringReader>(new UringReader());
        const int rc = io_uring_queue_init(reader_queue_depth, &r->ring_, 0);
        if (rc < 0) {
            *why = std::string("io_uring_queue_init: ") + strerror(-rc);
            return nullptr;
        }
        return r;
    }

    Status read(int fd, const ReadRequest* requests, size_t n) override {
        std::vector<Chunk> chunks;
        for (size_t i = 0; i < n; ++i) {
            for (uint64_t off = 0; off < requests[i].length; off += reader_chunk_bytes) {
                const uint64_t len = std::min<uint64_t>(reader_chunk_bytes, requests[i].length - off);
                chunks.push_back({requests[i].dst + off, requests[i].file_offset + off, len});
            }
        }
        size_t next = 0, in_flight = 0;
        Status failure;
        while ((next < chunks.size() && failure.is_ok()) || in_flight > 0) {
            while (next < chunks.size() && in_flight < reader_queue_depth && failure.is_ok()) {
                submit(fd, &chunks[next++]);
                ++in_flight;
            }
            io_uring_submit(&ring_);
            io_uring_cqe* cqe = nullptr;
            const int rc = io_uring_wait_cqe(&ring_, &cqe);
            if (rc < 0) return Status::error(StatusCode::io, "failed to read file: io_uring_wait_cqe: %s", strerror(-rc));
            Chunk* c = static_cast<Chunk*>(io_uring_cqe_get_data(cqe));
            const int res = cqe->res;
            io_uring_cqe_seen(&ring_, cqe);
            --in_flight;
            if (res < 0) {
                if (failure.is_ok()) failure = Status::error(StatusCode::io, "failed to read file: %s", strerror(-res));
                continue;
            }
            if (res == 0) {
                if (failure.is_ok()) failure = Status::error(StatusCode::io, "failed to read file: unexpected end of file");
                continue;
            }
            c->dst += res;
            c->offset += static_cast<uint64_t>(res);
            c->remaining -= static_cast<uint64_t>(res);
            if (c->remaining > 0 && failure.is_ok()) {  // short read: ask for the rest
                submit(fd, c);
                ++in_flight;
            }
        }
        return failure;
    }

    const char* name() const override { return "io_uring"; }

  private:
    UringReader() = default;
    void submit(int fd, Chunk* c) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        io_uring_prep_read(sqe, fd, c->dst, static_cast<unsigned>(c->remaining), c->offset);
        io_uring_sqe_set_data(sqe, c);
    }

    io_uring ring_{};
};

}  // namespace

std::unique_ptr<FileReader> make_uring_reader(std::string* why) { return UringReader::create(why); }

}  // namespace flexpipe
