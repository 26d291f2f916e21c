#pragma once
// Why: a shared-memory group (ops/shm) learns its segment's name through a key-value board;
// the gloo backend already has the job's rendezvous store, so this adapts that store to
// shm::Board, and says whether the shared-memory path is on (RUNRUN_GLOO_SHM).
// Thread-safety: as the store (any thread, calls serialised by the store).

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include <gloo/rendezvous/store.h>

#include "ops/shm/shm_board.h"

namespace runrun::gloo_backend {

class StoreBoard final : public shm::Board {
 public:
  explicit StoreBoard(std::shared_ptr<::gloo::rendezvous::Store> store)
      : store_(std::move(store)) {}
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;

 private:
  std::shared_ptr<::gloo::rendezvous::Store> store_;
};

// RUNRUN_GLOO_SHM: unset or 1: ranks of one host move bytes through shared memory; 0: always
// TCP. Throws InvalidArgumentError naming the variable for any other value.
bool shared_memory_from_environment();
// RUNRUN_GLOO_SHM_SINGLE_COPY: 1: that path's large allreduce reads peers' buffers directly
// where the kernel permits it (ops/shm/shm_cma.h); unset or 0: through the slots (measured
// faster, docs/perf-notes/gloo.md). Throws as above.
bool single_copy_from_environment();

}  // namespace runrun::gloo_backend
