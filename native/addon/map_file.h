// SPDX-License-Identifier: Apache-2.0
// mapFile(path) -> ArrayBuffer: a file's bytes as a private, copy-on-write memory mapping, unmapped when
// the ArrayBuffer is collected. A model file is read where the page cache holds it instead of being
// copied into fresh memory first (its weights are copied once, into the arena, by writeBatch), and the
// kernel starts reading the whole file ahead (MADV_WILLNEED) while its protobuf is decoded. Writes
// to the buffer stay private to the process. Where there is no mmap the result is a plain copy.
//
// unmapFile(buffer) -> boolean: lets a mapping go now, not when a collection finds it: the ArrayBuffer is
// detached (every view of it has length 0 from then on) and its range holds no pages any more; false
// when it was empty or released already. Only ArrayBuffers of mapFile are accepted (TypeError else).
#pragma once

#include <napi.h>

namespace flexpipe {

Napi::Value map_file(const Napi::CallbackInfo& info);
Napi::Value unmap_file(const Napi::CallbackInfo& info);

}  // namespace flexpipe
