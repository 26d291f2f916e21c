#pragma once
// Why: the core's unit tests run N ranks as threads of one process, each with its own Runtime
// over a shared LocalWorld. run_ranks starts them, waits for all, and fails the test with the
// first failure (and its rank). Catch2 v2 assertions are not thread-safe, so rank threads check
// with RANK_CHECK, which throws; only the main thread talks to Catch2.
// Thread-safety: run_ranks from the test's main thread; the rest from rank threads.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/runtime/runtime.h"
#include "ops/local/local_world.h"
#include "tests/unit/ops/rank_errors.h"  // RANK_CHECK

namespace runrun::testing {

using RankBody = std::function<void(int rank, Runtime& runtime)>;

// Runs `body` on `size` thread-ranks; knob overrides apply to every rank's Config;
// ranks_per_host > 0 splits the ranks into hosts of consecutive ranks (LocalWorldOptions).
void run_ranks(int size, const RankBody& body,
               const std::map<std::string, std::string>& overrides = {}, int ranks_per_host = 0);

// A 1-d float32 view of `values` (the tensor most tests use).
inline TensorView view_of(std::vector<float>& values) {
  return TensorView{values.data(), DataType::kFloat32, {static_cast<int64_t>(values.size())}};
}

// Waits for `handle` (at most 60 s, so a bug fails instead of hanging); throws unless it
// succeeded.
void require_ok(Handle& handle);
// Waits like require_ok and returns the error text; throws unless it failed with `code`.
std::string require_error(Handle& handle, ErrorCode code);

// Waits (at most 60 s, then throws) until another thread-rank set `flag`: orders one rank's
// enqueues after another's where a sleep would only make that order likely.
void wait_for(const std::atomic<bool>& flag);

}  // namespace runrun::testing
