#pragma once
// Why: the C API is implemented in more than one file (c_api.cc, c_api_collectives.cc,
// c_api_handles.cc, c_api_cuda.cc, c_api_elastic.cc, c_api_store.cc) and every failing call
// leaves its message for runrun_last_error on the calling thread; c_api.cc owns that
// thread-local message, this lets the other files set it.
// Thread-safety: sets the calling thread's message only.

#include <exception>
#include <string>

#include "common/errors.h"
#include "runrun/c_api.h"

namespace runrun::capi {

void set_last_error(const std::string& message);

// Runs `body`, turning runrun's exceptions into their status and the thread's last error (any
// other exception into RUNRUN_INTERNAL, "internal error: ..."); clears the last error first.
template <typename Body>
runrun_status guarded(Body&& body) {
  set_last_error("");
  try {
    body();
    return RUNRUN_OK;
  } catch (const Error& e) {
    set_last_error(e.what());
    return static_cast<runrun_status>(e.code());
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what());
    return RUNRUN_INTERNAL;
  }
}

}  // namespace runrun::capi
