#pragma once
// Why: the C API is implemented in more than one file (c_api.cc, c_api_elastic.cc) and every
// failing call leaves its message for runrun_last_error on the calling thread; c_api.cc owns
// that thread-local message, this lets the other files set it.
// Thread-safety: sets the calling thread's message only.

#include <string>

namespace runrun::capi {

void set_last_error(const std::string& message);

}  // namespace runrun::capi
