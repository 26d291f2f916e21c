#pragma once
// Why: runs one function per rank of a LocalWorld, each in its own thread, and rethrows the
// first real failure after every thread finished. A rank that throws is marked failed in the
// world, so its peers stop with PeerFailureError instead of waiting forever.
// Threading contract: call from the test's thread; `body` runs concurrently once per rank.

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "ops/local/local_backend.h"
#include "tests/unit/ops/rank_errors.h"

namespace runrun::testing {

// Returns every rank's exception (nullptr where the rank succeeded).
inline std::vector<std::exception_ptr> run_ranks_collect(
    const std::shared_ptr<LocalWorld>& world, const std::function<void(LocalBackend&)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world->size()));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world->size(); ++rank) {
    threads.emplace_back([&, rank] {
      try {
        LocalBackend backend(world, rank);
        body(backend);
      } catch (...) {
        errors[static_cast<size_t>(rank)] = std::current_exception();
        world->fail_rank(rank);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// Runs the ranks and rethrows the root cause of any failure (rank_errors.h).
inline void run_ranks(const std::shared_ptr<LocalWorld>& world,
                      const std::function<void(LocalBackend&)>& body) {
  const auto errors = run_ranks_collect(world, body);
  rethrow_root_cause(errors);
}

}  // namespace runrun::testing
