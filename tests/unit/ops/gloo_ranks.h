#pragma once
// Why: runs one function per rank of a gloo job inside this process: each rank is a thread
// with its own GlooBackend (tcp over 127.0.0.1), all meeting through one in-memory HashStore.
// A rank that throws destroys its backend, which closes its connections, so its peers stop
// with PeerFailureError instead of waiting; every thread is joined before returning.
// Threading contract: call from the test's thread; `body` runs concurrently once per rank.

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "common/errors.h"
#include "ops/gloo/gloo_backend.h"
#include "ops/gloo/gloo_shm_board.h"
#include "tests/unit/ops/rank_errors.h"

namespace runrun::testing {

inline gloo_backend::GlooBackendOptions gloo_test_options() {
  gloo_backend::GlooBackendOptions options;
  options.hostname = "127.0.0.1";
  options.connect_timeout = std::chrono::seconds(60);
  // Generous: a bug shows as a TimeoutError naming the op instead of a ctest timeout.
  options.collective_timeout = std::chrono::seconds(90);
  // The ranks share this host: shared memory unless RUNRUN_GLOO_SHM=0 (the ctest variants).
  options.shared_memory = gloo_backend::shared_memory_from_environment();
  // By size and rank count unless RUNRUN_GLOO_ALLREDUCE etc. force one (the ctest variants).
  options.algorithms = algorithms::collective_algorithms_from_environment();
  return options;
}

// Returns every rank's exception (nullptr where the rank succeeded).
inline std::vector<std::exception_ptr> run_gloo_ranks_collect(
    int size, const gloo_backend::GlooBackendOptions& options,
    const std::function<void(Backend&)>& body) {
  auto store = std::make_shared<::gloo::rendezvous::HashStore>();
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto backend = gloo_backend::make_gloo_backend(store, rank, size, options);
        body(*backend);
      } catch (...) {
        errors[static_cast<size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// Runs the ranks and rethrows the root cause of any failure (rank_errors.h).
inline void run_gloo_ranks(int size, const std::function<void(Backend&)>& body) {
  const auto errors = run_gloo_ranks_collect(size, gloo_test_options(), body);
  rethrow_root_cause(errors);
}

}  // namespace runrun::testing
