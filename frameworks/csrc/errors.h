#pragma once
// Why: every failed C API call becomes a Python exception of the class the Python package maps
// to the status code (runrun.common.exceptions), carrying the core's message unchanged.
// Threading: call with the GIL held.

#include <runrun/c_api.h>

namespace runrun::python {

// Raises (throws pybind11::error_already_set) the exception for `status` with `message`.
[[noreturn]] void raise_status(runrun_status status, const char* message);

// Throws for any status but RUNRUN_OK, with runrun_last_error() of this thread as the message;
// `what` prefixes it when the core left no message.
void check_status(runrun_status status, const char* what);

}  // namespace runrun::python
