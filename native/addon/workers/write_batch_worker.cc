// SPDX-License-Identifier: Apache-2.0
// WriteBatchWorker: jobs checked on the JS thread, written on the compute lane.
#include "addon/workers/write_batch_worker.h"

#include <string>

#include "addon/convert.h"
#include "addon/prepack.h"
#include "common/dtype.h"

namespace flexpipe {

void WriteBatchWorker::collect(const Napi::Value& owner, const Napi::Value& jobs) {
    Napi::Env env = owner.Env();
    if (!jobs.IsArray()) throw Napi::TypeError::New(env, "jobs: expected an array");
    Napi::Array a = jobs.As<Napi::Array>();
    jobs_.reserve(a.Length());
    for (uint32_t i = 0; i < a.Length(); ++i) {
        Napi::Value v = a.Get(i);
        if (!v.IsObject()) throw Napi::TypeError::New(env, "jobs[" + std::to_string(i) + "]: expected an object");
        Napi::Object o = v.As<Napi::Object>();
        const auto offset = static_cast<uint64_t>(integer_arg(o.Get("offset"), 0, max_arena_offset, "offset"));
        WriteJob j;
        Napi::Value transform = o.Get("transform");
        if (transform.IsUndefined()) {
            const ByteView bytes = typed_array_bytes(o.Get("data"), "data");
            j.src = bytes.data;
            j.bytes = bytes.bytes;
        } else {
            // the job object is the weight too: {dtype, dims, data}, its size checked against the dims
            j.prepack = prepack_args(transform, o, o.Get("ints"), &j.weight, &j.ints, &j.out);
            j.src = static_cast<const uint8_t*>(j.weight.data);
            j.bytes = static_cast<size_t>(j.out.numel) * dtype_size(j.out.dtype);
        }
        uint8_t* dst = nullptr;
        Status s = session_->arena_span(offset, j.bytes, &dst);
        if (!s.is_ok()) throw status_to_error(env, s);
        j.dst = dst;
        j.out.data = dst;
        pinned_.push_back(Napi::Persistent(o.Get("data").As<Napi::Object>()));
        jobs_.push_back(std::move(j));
    }
    owner_ = Napi::Persistent(owner.As<Napi::Object>());
}

Status WriteBatchWorker::on_lane(void* self) {
    auto* w = static_cast<WriteBatchWorker*>(self);
    return run_write_batch(w->jobs_, w->session_->threads());
}

Status WriteBatchWorker::work() {
    return session_->threads() <= 1 ? on_lane(this) : lane_->run(&WriteBatchWorker::on_lane, this);
}

}  // namespace flexpipe
