#pragma once
// Why: the ControlChannel over Gloo runs on its own gloo context (its own connections and
// slots), so negotiation never matches a data collective's messages and a Gloo job needs no
// MPI at all. It owns that context and its own Guard (abort, timeout, errors naming the peer),
// so it lives and is aborted independently of the GlooBackend that made it
// (create_control_channel); it shares only the tcp device and the rendezvous store. Built from
// point-to-point exchanges. Subgroups connect a new context under `<prefix>/set<N>`.
// Threading contract: one driving thread; abort() from any thread.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include "ops/backend.h"
#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"
#include "ops/gloo/gloo_direct_mailbox.h"

namespace runrun::gloo_backend {

// Combines `words` (the same length on every rank) with every other rank's, in place, by an
// associative and commutative `combine(mine, other)` (AND, min): the same words on every rank.
// Up to 4 ranks in one direct exchange; beyond, recursive doubling
// (ops/algorithms/recursive_doubling.h): ceil(log2 N) steps of one message each (two more
// steps when N is not a power of two), so a negotiation round costs O(log N) messages per rank
// (issue 40). Waits through `guard`. `combine(mine, other, n)` combines n words into `mine`.
using WordCombine = void (*)(uint64_t* mine, const uint64_t* other, size_t n);
void allreduce_words(Mesh& mesh, Guard& guard, const char* op, std::vector<uint64_t>& words,
                     WordCombine combine);
// Element-wise minimum of `values` across the ranks of `mesh`, in place, waiting through
// `guard` (create_subgroup's agreement, on the data or a control context).
void allreduce_min(Mesh& mesh, Guard& guard, const char* op, std::vector<uint64_t>& values);

struct GlooChannelOptions {
  std::chrono::milliseconds collective_timeout{0};  // 0: no limit
  std::chrono::milliseconds connect_timeout{std::chrono::minutes(5)};
};

class GlooControlChannel final : public ControlChannel {
 public:
  // Collective over the `size` ranks passing the same `prefix` of `store`: connects a context
  // over `device` (at most options.connect_timeout).
  GlooControlChannel(std::shared_ptr<::gloo::rendezvous::Store> store, std::string prefix, int rank,
                     int size, std::shared_ptr<::gloo::transport::Device> device,
                     GlooChannelOptions options);
  ~GlooControlChannel() override;

  void allreduce_and(std::vector<uint64_t>& bits) override;
  // Up to 4 ranks over receives posted a round ahead (gloo_direct_mailbox.h); beyond,
  // allreduce_and.
  void round_allreduce_and(std::vector<uint64_t>& bits) override;
  std::vector<std::string> gather(const std::string& bytes, int root) override;
  void broadcast(std::string& bytes, int root) override;
  std::unique_ptr<ControlChannel> create_subgroup(const std::vector<int>& ranks) override;
  void abort() override { guard_->abort(); }

 private:
  void check_root(const char* op, int root) const;

  std::shared_ptr<::gloo::rendezvous::Store> store_;
  std::string prefix_;
  std::shared_ptr<::gloo::transport::Device> device_;
  GlooChannelOptions options_;
  int rank_;
  int size_;
  std::unique_ptr<Guard> guard_;
  std::unique_ptr<Mesh> mesh_;
  DirectMailbox rounds_;  // after mesh_: destroyed before it
  uint64_t subgroups_created_ = 0;
};

}  // namespace runrun::gloo_backend
