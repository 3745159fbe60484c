// SPDX-License-Identifier: Apache-2.0
// A pipelined run: the schedule's checks, both lanes started together, the first error kept.
#include "addon/workers/pipeline_worker.h"

#include <string>

#include "addon/convert.h"

namespace flexpipe {
namespace {

std::vector<int32_t> int32_array(const Napi::Value& v, const char* what) {
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
        throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected an Int32Array");
    }
    Napi::Int32Array a = v.As<Napi::Int32Array>();
    return std::vector<int32_t>(a.Data(), a.Data() + a.ElementLength());
}

Napi::Value milliseconds(Napi::Env env, const int64_t* ns, size_t n) {
    Napi::Float64Array ms = Napi::Float64Array::New(env, n);
    for (size_t i = 0; i < n; ++i) ms[i] = static_cast<double>(ns[i]) * 1e-6;
    return ms;
}

}  // namespace

void PipelineWorker::set_schedule(const Napi::Value& after, const Napi::Value& need) {
    Napi::Env env = after.Env();
    after_ = int32_array(after, "after");
    need_ = int32_array(need, "need");
    const size_t ops = run_.op_count();
    if (run_.op_begin() != 0 || run_.op_end() != ops) {
        throw Napi::RangeError::New(env, "runPipeline: runs the whole program (ops 0.." + std::to_string(ops) + ")");
    }
    if (after_.size() != read_.size()) {
        throw Napi::RangeError::New(env, "after: expected one entry per range (" + std::to_string(read_.size()) +
                                             "), got " + std::to_string(after_.size()));
    }
    if (need_.size() != ops) {
        throw Napi::RangeError::New(env, "need: expected one entry per op (" + std::to_string(ops) + "), got " +
                                             std::to_string(need_.size()));
    }
    bytes_.resize(read_.size());
    for (size_t j = 0; j < bytes_.size(); ++j) bytes_[j] = read_.length(j);
    schedule_ = PipelineSchedule{after_.data(), need_.data(), bytes_.data(), read_.size(), ops};
    const Status v = PipelineGate::validate(schedule_);
    if (!v.is_ok()) throw status_to_error(env, v);
    remaining_.reset(new std::atomic<uint64_t>[read_.size() + 1]);
    deadline_ns_.assign(read_.size() + 1, 0);
    load_end_ns_.assign(read_.size() + 1, 0);
    if (run_.profile()) {
        op_start_ns_.assign(ops, 0);
        op_end_ns_.assign(ops, 0);
    }
}

Status PipelineWorker::load_on_lane(void* self) {
    auto* w = static_cast<PipelineWorker*>(self);
    Status s = w->read_.execute(w->gate_);
    if (!s.is_ok()) w->gate_->stop();  // the compute side must not wait for loads that will not come
    return s;
}

Status PipelineWorker::compute_on_lane(void* self) {
    auto* w = static_cast<PipelineWorker*>(self);
    Status s = w->run_.execute(w->gate_);
    if (!s.is_ok()) w->gate_->stop();  // nor the load side for ops that will not run
    return s;
}

Status PipelineWorker::work() {
    const bool timed = run_.profile();
    PipelineGate gate(schedule_,
                      {remaining_.get(), deadline_ns_.data(), load_end_ns_.data(), timed ? op_start_ns_.data() : nullptr,
                       timed ? op_end_ns_.data() : nullptr},
                      read_.options().bandwidth);
    gate_ = &gate;
    load_lane_->start(&PipelineWorker::load_on_lane, this);
    Status computed = run_.session()->threads() <= 1 ? compute_on_lane(this)
                                                    : compute_lane_->run(&PipelineWorker::compute_on_lane, this);
    Status loaded = load_lane_->wait();
    gate_ = nullptr;
    compute_wait_ms_ = gate.compute_wait_ms();
    load_wait_ms_ = gate.load_wait_ms();
    // The side that failed first: the other one ended with `cancelled` at the gate.
    if (!loaded.is_ok() && loaded.code() != StatusCode::cancelled) return loaded;
    if (!computed.is_ok() && computed.code() != StatusCode::cancelled) return computed;
    return !loaded.is_ok() ? loaded : computed;
}

Napi::Value PipelineWorker::result(Napi::Env env) {
    Napi::Object o = read_.result(env);
    o.Set("ops", run_.op_times(env));
    o.Set("computeWaitMs", Napi::Number::New(env, compute_wait_ms_));
    o.Set("loadWaitMs", Napi::Number::New(env, load_wait_ms_));
    o.Set("loadEndMs", milliseconds(env, load_end_ns_.data(), read_.size()));
    const bool timed = run_.profile();
    o.Set("opStartMs", timed ? milliseconds(env, op_start_ns_.data(), op_start_ns_.size()) : env.Undefined());
    o.Set("opEndMs", timed ? milliseconds(env, op_end_ns_.data(), op_end_ns_.size()) : env.Undefined());
    return o;
}

}  // namespace flexpipe
