// SPDX-License-Identifier: Apache-2.0
// Chooses the file reader: io_uring when available, otherwise the pread pool.
#include "io/reader.h"

namespace flexpipe {

#ifndef FLEXPIPE_HAVE_LIBURING
std::unique_ptr<FileReader> make_uring_reader(std::string* why) {
    *why = "built without liburing";
    return nullptr;
}
#endif

std::unique_ptr<FileReader> make_file_reader(const std::string& preference, std::string* note) {
    if (preference != "pread") {
        std::string why;
        auto uring = make_uring_reader(&why);
        if (uring) {
            *note = "io_uring";
            return uring;
        }
        *note = "pread (io_uring unavailable: " + why + ")";
    } else {
        *note = "pread (requested)";
    }
    return make_pread_reader();
}

}  // namespace flexpipe
