// SPDX-License-Identifier: Apache-2.0
// WriteBatchWorker: a plan's resident data into the arena off the event loop (runtime/write_batch.h),
// on the session's compute lane so that its threads are the team every run uses (runtime/lane.h).
//
// writeBatch(jobs) takes an array of
//     { offset, data }                                 copy data's bytes to arena[offset]
//     { offset, data, transform, dtype, dims, ints }   the prepack transform of the weight
//                                                      {dtype, dims, data} written at arena[offset]
// Everything is checked on the JS thread before anything is written: the transform's name, weight and
// ints (its shape function), and that each destination lies inside the arena. The arrays are pinned
// until the promise settles.
#pragma once

#include <napi.h>

#include <vector>

#include "addon/workers/status_worker.h"
#include "runtime/lane.h"
#include "runtime/session.h"
#include "runtime/write_batch.h"

namespace flexpipe {

class WriteBatchWorker final : public StatusWorker {
  public:
    WriteBatchWorker(Napi::Env env, std::atomic<bool>* busy, Session* session, Lane* lane)
        : StatusWorker(env, busy), session_(session), lane_(lane) {}
    // Throws a JS TypeError / RangeError (or the transform's coded error) on a bad job.
    void collect(const Napi::Value& owner, const Napi::Value& jobs);

  protected:
    Status work() override;

  private:
    static Status on_lane(void* self);

    Session* session_;
    Lane* lane_;
    std::vector<WriteJob> jobs_;
    Napi::ObjectReference owner_;
    std::vector<Napi::ObjectReference> pinned_;
};

}  // namespace flexpipe
