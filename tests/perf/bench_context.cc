#include "tests/perf/bench_context.h"

#include "common/errors.h"

namespace runrun::perf {

void wait_ok(const std::shared_ptr<Handle>& handle, const std::string& what) {
  handle->wait();
  if (handle->code() == ErrorCode::kOk) return;
  const std::string message = what + " failed: " + handle->error();
  switch (handle->code()) {
    case ErrorCode::kShutDown:
      throw ShutDownError(RUNRUN_WHERE, message);
    case ErrorCode::kTimeout:
      throw TimeoutError(RUNRUN_WHERE, message);
    case ErrorCode::kPeerFailure:
      throw PeerFailureError(RUNRUN_WHERE, message);
    default:
      throw InternalError(RUNRUN_WHERE, message);
  }
}

void expect_all(const float* data, size_t n, float want, const std::string& what, int rank) {
  for (size_t i = 0; i < n; ++i) {
    if (data[i] == want) continue;
    throw InternalError(
        RUNRUN_WHERE, what + " on rank " + std::to_string(rank) + ": element " + std::to_string(i) +
                          " of " + std::to_string(n) + " is " + std::to_string(data[i]) +
                          ", expected " + std::to_string(want) +
                          " (the benchmark checks every result once before "
                          "timing; a wrong result is a runtime or communication library bug)");
  }
}

}  // namespace runrun::perf
