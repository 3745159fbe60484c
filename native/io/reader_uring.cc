// SPDX-License-Identifier: Apache-2.0
// The io_uring reader (liburing): chunked reads kept geometry.queue_depth deep, short reads resubmitted,
// no allocation per call (chunk slots live on the stack). A gated read (ReadGate) stops submitting at
// a request whose gate is closed; while earlier chunks are in flight it looks at the gate again after
// each completion (the disk stays busy meanwhile), and with nothing in flight it blocks in the gate.
#include <liburing.h>

#include <cerrno>
#include <cstring>

#include "io/reader.h"

namespace flexpipe {
namespace {

struct Chunk {
    uint8_t* dst;
    uint64_t offset;
    uint64_t remaining;
    size_t request;
};


class UringReader final : public FileReader {
  public:
    // Only a ring that was set up is torn down: io_uring_queue_exit on a failed one would close its
    // ring_fd, 0 in a zeroed ring, i.e. the process's stdin, and the next file opened as fd 0 would
    // then be closed by the next failed setup (io_uring refused by seccomp, as Docker's default
    // profile does, or ENOSYS under qemu-user): EBADF in unrelated code.
    ~UringReader() override {
        if (ready_) io_uring_queue_exit(&ring_);
    }
    static std::unique_ptr<UringReader> create(std::string* why) {
        auto r = std::unique_ptr<UringReader>(new UringReader());
        const int rc = io_uring_queue_init(ReadGeometry::max_queue_depth, &r->ring_, 0);
        if (rc < 0) {
            *why = std::string("io_uring_queue_init: ") + strerror(-rc);
            return nullptr;
        }
        r->ready_ = true;
        return r;
    }

    // Up to geometry.queue_depth chunks in flight, each in a fixed slot; a short read resubmits the
    // rest from the same slot. After the first failure nothing new is submitted and the in-flight
    // chunks are drained before returning (the ring is reused by the next call).
    Status read(int fd, const ReadRequest* requests, size_t n, const ReadGeometry& geometry, ReadGate* gate) override {
        Chunk slots[ReadGeometry::max_queue_depth];
        Chunk* free_slots[ReadGeometry::max_queue_depth];
        int n_free = 0;
        for (int i = 0; i < geometry.queue_depth; ++i) free_slots[n_free++] = &slots[i];
        ChunkCursor cursor(requests, n, geometry.chunk_bytes);
        bool more = true;
        int in_flight = 0;
        Status failure;
        while ((more && failure.is_ok()) || in_flight > 0) {
            while (more && failure.is_ok() && n_free > 0) {
                size_t request = 0;
                bool first = false;
                if (!(more = cursor.peek(&request, &first))) break;
                if (gate && first && !gate->ready(request)) {
                    if (in_flight > 0) break;  // look again after the next completion
                    if (!gate->wait_ready(request)) {
                        failure = Status::error(StatusCode::cancelled, "failed to read file: the pipeline stopped");
                        break;
                    }
                    continue;  // open now: ready(request) holds
                }
                ReadRequest next;
                cursor.next(&next, &request);
                Chunk* c = free_slots[--n_free];
                *c = {next.dst, next.file_offset, next.length, request};
                submit(fd, c);
                ++in_flight;
            }
            if (in_flight == 0) continue;
            io_uring_submit(&ring_);
            io_uring_cqe* cqe = nullptr;
            const int rc = io_uring_wait_cqe(&ring_, &cqe);
            if (rc == -EINTR) continue;
            if (rc < 0) return Status::error(StatusCode::io, "failed to read file: io_uring_wait_cqe: %s", strerror(-rc));
            Chunk* c = static_cast<Chunk*>(io_uring_cqe_get_data(cqe));
            const int res = cqe->res;
            io_uring_cqe_seen(&ring_, cqe);
            --in_flight;
            if (res < 0 && failure.is_ok()) {
                failure = Status::error(StatusCode::io, "failed to read file: %s (errno=%d)", strerror(-res), -res);
            } else if (res == 0 && failure.is_ok()) {
                failure = Status::error(StatusCode::io, "failed to read file: unexpected end of file");
            } else if (res > 0) {
                c->dst += res;
                c->offset += static_cast<uint64_t>(res);
                c->remaining -= static_cast<uint64_t>(res);
                if (gate) gate->read_bytes(c->request, static_cast<uint64_t>(res));
                if (c->remaining > 0 && failure.is_ok()) {  // short read: ask for the rest
                    submit(fd, c);
                    ++in_flight;
                    continue;
                }
            }
            free_slots[n_free++] = c;
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
    bool ready_ = false;
};

}  // namespace

std::unique_ptr<FileReader> make_uring_reader(std::string* why) { return UringReader::create(why); }

}  // namespace flexpipe
