#pragma once
// Why: the gloo backend's ControlChannel runs on its own gloo context (its own connections and
// slots), so negotiation never matches a data collective's messages and a Gloo job needs no
// MPI at all. Built from point-to-point exchanges; every wait goes through the backend's Guard
// (abort, timeout, errors naming the peer).
// Threading contract: driven by the backend's one thread.

#include <cstdint>
#include <string>
#include <vector>

#include "ops/backend.h"
#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"

namespace runrun::gloo_backend {

class GlooControlChannel final : public ControlChannel {
 public:
  // `mesh` and `guard` stay owned by the backend and outlive this channel.
  GlooControlChannel(Mesh& mesh, Guard& guard);

  void allreduce_and(std::vector<uint64_t>& bits) override;
  std::vector<std::string> gather(const std::string& bytes, int root) override;
  void broadcast(std::string& bytes, int root) override;

  // Element-wise minimum of `values` across ranks, in place (create_subgroup's agreement).
  void allreduce_min(std::vector<uint64_t>& values);

 private:
  // Every rank's `words` (same length everywhere), indexed by rank.
  std::vector<std::vector<uint64_t>> allgather_words(const char* op,
                                                     const std::vector<uint64_t>& words);
  void check_root(const char* op, int root) const;

  Mesh& mesh_;
  Guard& guard_;
  int rank_;
  int size_;
};

}  // namespace runrun::gloo_backend
