#pragma once
// Why: the C API is implemented in several files along c_api.h's sections (c_api.cc: lifetime,
// queries, process sets, timeline; c_api_collectives.cc; c_api_handles.cc); they share the two
// opaque structs behind its pointers and the checks every entry point starts with.
// Thread-safety: a runrun_runtime may be used from any thread (the Runtime is); a runrun_handle
// by one thread at a time (its error and splits strings), as c_api.h says.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/fork_generation.h"
#include "core/runtime/handle.h"
#include "core/runtime/runtime.h"
#include "runrun/c_api.h"

struct runrun_runtime {
  std::unique_ptr<runrun::Runtime> runtime;
  runrun::ForkStamp made_in;  // a forked child refuses to use it (common/fork_generation.h)
};

struct runrun_handle {
  std::shared_ptr<runrun::Handle> handle;
  std::string error;  // keeps runrun_handle_error's pointer valid
  std::vector<int64_t> splits;
  runrun::ForkStamp made_in;
};

namespace runrun::capi {

// Throws InvalidArgumentError(message) unless `condition` holds.
void require(bool condition, const char* message);
// The runtime behind `rt`; InvalidArgumentError for null, UnsupportedError in a forked child.
Runtime& runtime_of(runrun_runtime* rt);
// Wraps `handle` for the caller (a runrun_handle from the free list: c_api_handles.cc).
void give(std::shared_ptr<Handle> handle, runrun_handle** out);

}  // namespace runrun::capi
