// SPDX-License-Identifier: Apache-2.0
// Session methods as JS sees them: argument checks here, work in runtime/session.cc and workers/.
#include "addon/session_wrap.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "addon/convert.h"
#include "addon/workers/lane_run.h"
#include "addon/workers/pipeline_worker.h"
#include "addon/workers/read_worker.h"
#include "addon/workers/write_batch_worker.h"

namespace flexpipe {

Napi::Function SessionWrap::define(Napi::Env env) {
    return DefineClass(env, "Session",
                       {InstanceMethod("resize", &SessionWrap::resize), InstanceMethod("write", &SessionWrap::write),
                        InstanceMethod("writeBatch", &SessionWrap::write_batch),
                        InstanceMethod("read", &SessionWrap::read),
                        InstanceMethod("addProgram", &SessionWrap::add_program),
                        InstanceMethod("removeProgram", &SessionWrap::remove_program),
                        InstanceMethod("run", &SessionWrap::run), InstanceMethod("readFile", &SessionWrap::read_file),
                        InstanceMethod("runPipeline", &SessionWrap::run_pipeline),
                        InstanceMethod("stats", &SessionWrap::stats),
                        InstanceMethod("setThreads", &SessionWrap::set_threads),
                        InstanceMethod("dispose", &SessionWrap::dispose)});
}

// new Session(threads, ioPreference)
SessionWrap::SessionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SessionWrap>(info) {
    const int threads = static_cast<int>(integer_arg(info[0], 1, 256, "threads"));
    const std::string io = info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "auto";
    if (io != "auto" && io != "uring" && io != "pread") {
        throw Napi::RangeError::New(info.Env(), "io: expected 'auto', 'uring' or 'pread', got '" + io + "'");
    }
    session_ = std::make_unique<Session>(threads, io);
    lane_ = std::make_unique<Lane>();
}

void SessionWrap::check_alive(Napi::Env env, const char* what) {
    if (!session_) {
        Napi::Error e = Napi::Error::New(env, std::string(what) + ": the session is disposed");
        e.Set("code", Napi::String::New(env, "ERR_FLEXPIPE_DISPOSED"));
        throw e;
    }
}

static Napi::Error busy_error(Napi::Env env, const std::string& message) {
    Napi::Error e = Napi::Error::New(env, message);
    e.Set("code", Napi::String::New(env, "ERR_FLEXPIPE_BUSY"));
    return e;
}

void SessionWrap::check_usable(Napi::Env env, const char* what, Claim claim) {
    check_alive(env, what);
    if (claim == Claim::none) {
        if (compute_busy_.load() || load_busy_.load()) {
            throw busy_error(env, std::string(what) + ": the session is busy (" +
                                      (compute_busy_.load() ? "a run" : "a readFile") +
                                      " is in flight); await it first");
        }
        return;
    }
    const auto claim_one = [&](std::atomic<bool>* flag) {
        bool expected = false;
        if (!flag->compare_exchange_strong(expected, true)) {
            throw busy_error(env, std::string(what) + ": the session is busy with another " +
                                      (flag == &compute_busy_ ? "run" : "readFile") +
                                      " (one run and one readFile may overlap, not two of either; a runPipeline "
                                      "takes both); await it first");
        }
    };
    if (claim != Claim::both) return claim_one(lane_flag(claim));
    claim_one(&compute_busy_);
    try {
        claim_one(&load_busy_);
    } catch (...) {
        release(Claim::compute);
        throw;
    }
}

static void throw_if_error(Napi::Env env, const Status& s) {
    if (!s.is_ok()) throw status_to_error(env, s);
}

// resize(bytes, keepBytes)
Napi::Value SessionWrap::resize(const Napi::CallbackInfo& info) {
    check_usable(info.Env(), "resize", Claim::none);
    const auto bytes = static_cast<uint64_t>(integer_arg(info[0], 0, max_arena_offset, "bytes"));
    const auto keep = static_cast<uint64_t>(integer_arg(info[1], 0, max_arena_offset, "keep"));
    throw_if_error(info.Env(), session_->resize(bytes, keep));
    return info.Env().Undefined();
}

Napi::Value SessionWrap::copy_bytes(const Napi::CallbackInfo& info, bool to_arena) {
    check_usable(info.Env(), to_arena ? "write" : "read", Claim::none);
    const auto offset = static_cast<uint64_t>(integer_arg(info[0], 0, max_arena_offset, "offset"));
    const ByteView a = typed_array_bytes(info[1], "data");
    throw_if_error(info.Env(), to_arena ? session_->write(offset, a.data, a.bytes)
                                        : session_->read(offset, a.data, a.bytes));
    return info.Env().Undefined();
}

// write(offset, typedArray): copies the array into the arena
Napi::Value SessionWrap::write(const Napi::CallbackInfo& info) { return copy_bytes(info, true); }

// read(offset, typedArray): copies arena bytes into the array
Napi::Value SessionWrap::read(const Napi::CallbackInfo& info) { return copy_bytes(info, false); }

// addProgram(Float64Array) -> id
Napi::Value SessionWrap::add_program(const Napi::CallbackInfo& info) {
    check_usable(info.Env(), "addProgram", Claim::none);
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
        throw Napi::TypeError::New(info.Env(), "program: expected a Float64Array");
    }
    Napi::Float64Array words = info[0].As<Napi::Float64Array>();
    int32_t id = -1;
    throw_if_error(info.Env(), session_->add_program(words.Data(), words.ElementLength(), &id));
    return Napi::Number::New(info.Env(), id);
}

Napi::Value SessionWrap::remove_program(const Napi::CallbackInfo& info) {
    check_usable(info.Env(), "removeProgram", Claim::none);
    const auto id = static_cast<int32_t>(integer_arg(info[0], 0, INT32_MAX, "program"));
    throw_if_error(info.Env(), session_->remove_program(id));
    return info.Env().Undefined();
}

// run(programId, activationBase, inputs: [tensorId, TypedArray][], outputs: [tensorId, TypedArray][],
//     profile?: boolean, opBegin?: number, opEnd?: number)
//   -> Promise<undefined | Float64Array of per-op milliseconds (one per op of the range)>
Napi::Value SessionWrap::run(const Napi::CallbackInfo& info) {
    return start_claimed(info.Env(), "run", Claim::compute, [&]() -> Napi::Value {
        const auto id = static_cast<int32_t>(integer_arg(info[0], 0, INT32_MAX, "program"));
        const auto base = static_cast<uint64_t>(integer_arg(info[1], 0, max_arena_offset, "activationBase"));
        auto run = std::make_unique<LaneRun>(info.Env(), &compute_busy_, session_.get(), id, base);
        run->args().collect(info.This(), info[2], info[3]);  // pins the arrays (and this session); validates ids and sizes
        run->args().set_range(info[5], info[6]);             // validates 0 <= opBegin <= opEnd <= op count
        run->args().set_profile(info[4]);
        return runs_.start(info.Env(), lane_.get(), run.release());  // deleted when it settles
    });
}

// writeBatch(jobs: Array<{ offset, data } | { offset, data, transform, dtype, dims, ints }>) -> Promise<undefined>
// (addon/workers/write_batch_worker.h)
Napi::Value SessionWrap::write_batch(const Napi::CallbackInfo& info) {
    return start_claimed(info.Env(), "writeBatch", Claim::compute, [&]() -> Napi::Value {
        auto worker = std::make_unique<WriteBatchWorker>(info.Env(), &compute_busy_, session_.get(), lane_.get());
        worker->collect(info.This(), info[0]);
        return StatusWorker::queue(std::move(worker));
    });
}

// readFile(path, ranges: Float64Array of [fileOffset, length, arenaOffset]*,
//          options?: { direct?, bandwidth?, chunkBytes?, queueDepth? }) -> Promise<{ direct, bytes, ms }>
Napi::Value SessionWrap::read_file(const Napi::CallbackInfo& info) {
    return start_claimed(info.Env(), "readFile", Claim::load, [&]() -> Napi::Value {
        auto worker = std::make_unique<ReadWorker>(info.Env(), &load_busy_, session_.get(),
                                                   string_arg(info[0], "path"));
        worker->args().collect(info.This(), info[1], info[2]);
        return StatusWorker::queue(std::move(worker));
    });
}

// runPipeline(programId, activationBase, inputs, outputs, profile, path, ranges, after: Int32Array,
//             need: Int32Array, readOptions?) -> Promise<{ ops, direct, bytes, ms, computeWaitMs, loadWaitMs }>
// The whole program and the reads at once, each waiting for the other only through after/need
// (runtime/pipeline_gate.h); takes both lanes.
Napi::Value SessionWrap::run_pipeline(const Napi::CallbackInfo& info) {
    return start_claimed(info.Env(), "runPipeline", Claim::both, [&]() -> Napi::Value {
        const auto id = static_cast<int32_t>(integer_arg(info[0], 0, INT32_MAX, "program"));
        const auto base = static_cast<uint64_t>(integer_arg(info[1], 0, max_arena_offset, "activationBase"));
        const std::string path = string_arg(info[5], "path");
        if (!load_lane_) load_lane_ = std::make_unique<Lane>();  // on first use: most sessions never pipeline
        auto worker = std::make_unique<PipelineWorker>(info.Env(), &compute_busy_, &load_busy_, session_.get(),
                                                       lane_.get(), load_lane_.get(), id, base,
                                                       path);
        worker->run_args().collect(info.This(), info[2], info[3]);
        worker->run_args().set_range(info.Env().Undefined(), info.Env().Undefined());
        worker->run_args().set_profile(info[4]);
        worker->read_args().collect(info.This(), info[6], info[9]);
        worker->set_schedule(info[7], info[8]);
        return StatusWorker::queue(std::move(worker));
    });
}

Napi::Value SessionWrap::stats(const Napi::CallbackInfo& info) {
    check_alive(info.Env(), "stats");
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("arenaBytes", Napi::Number::New(info.Env(), static_cast<double>(session_->arena().size())));
    o.Set("arenaHighWater", Napi::Number::New(info.Env(), static_cast<double>(session_->arena().high_water())));
    o.Set("reader", Napi::String::New(info.Env(), session_->reader_note()));
    o.Set("threads", Napi::Number::New(info.Env(), session_->threads()));
    o.Set("bytesRead", Napi::Number::New(info.Env(), static_cast<double>(session_->bytes_read())));
    o.Set("directReads", Napi::Number::New(info.Env(), static_cast<double>(session_->direct_reads())));
    return o;
}

Napi::Value SessionWrap::set_threads(const Napi::CallbackInfo& info) {
    check_usable(info.Env(), "setThreads", Claim::none);
    session_->set_threads(static_cast<int>(integer_arg(info[0], 1, 256, "threads")));
    return info.Env().Undefined();
}

// dispose(): idempotent; refused while a run or read is in flight.
Napi::Value SessionWrap::dispose(const Napi::CallbackInfo& info) {
    if (!session_) return info.Env().Undefined();
    check_usable(info.Env(), "dispose", Claim::none);
    session_.reset();
    lane_.reset();       // joins the compute thread (idle: no run is in flight)
    load_lane_.reset();  // and the load thread
    return info.Env().Undefined();
}

}  // namespace flexpipe
