#pragma once
// Why: gloo writes an unbound send only once the receiver has posted its receive, so in an
// exchange of two ranks that post at the same moment each rank's bytes wait for the other's
// notice: a round trip and a wake-up of the peer's device thread more than the bytes need.
// Small direct exchanges (every rank sends one buffer to every other rank: the negotiation's
// AND, the one-step small allreduce) come one after another, so a DirectMailbox posts the
// receives of its next exchange as soon as one ends; the peers' sends then leave their threads
// at once. Measured between network-namespace hosts in docs/benchmarks.md (issue 40, point 4).
// - Its receives use their own slot sequence (Mesh::next_preposted_slot), so exchanges drawn
//   in between from Mesh::next_slot never meet them.
// - gloo fills a receive with fewer bytes than it was posted for, so one posted size (the
//   capacity) serves every exchange up to it. A larger exchange leaves the posted receives
//   unused for good (every rank sees the same sizes, so no peer sends to them) and posts again,
//   doubling the capacity: O(log) times over a mailbox's life.
// Threading contract: the owning backend's or channel's driving thread; destroy it before its
// mesh.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include <gloo/transport/unbound_buffer.h>

#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"

namespace runrun::gloo_backend {

class DirectMailbox {
 public:
  // `initial_capacity`: bytes per peer posted before the first exchange asks for more.
  DirectMailbox(Mesh& mesh, size_t initial_capacity)
      : mesh_(mesh), initial_capacity_(initial_capacity) {}
  DirectMailbox(const DirectMailbox&) = delete;
  DirectMailbox& operator=(const DirectMailbox&) = delete;

  // Collective over every rank of the mesh, each passing the same `bytes`: sends `data` to
  // every other rank, hands each other rank's bytes to `take(peer, bytes)` in rank order as
  // they arrive (valid during the call), waiting through `guard` under `op` until `deadline`,
  // then posts the next exchange's receives.
  void exchange(Guard& guard, const char* op, Guard::Clock::time_point deadline, const void* data,
                size_t bytes, const std::function<void(int peer, const void* bytes)>& take);

  // Exchanges that found their receives posted, and posts that left receives unused (tests).
  size_t exchanges_preposted() const { return exchanges_preposted_; }
  size_t posts_abandoned() const { return posts_abandoned_; }

 private:
  // Posts one receive of `capacity` bytes from every other rank in a fresh slot. A failure goes
  // to guard->fail (which throws) when `guard` is given; without, it is kept for the next
  // exchange to report.
  void post(Guard* guard, const char* op, size_t capacity);

  Mesh& mesh_;
  size_t initial_capacity_;
  uint64_t slot_ = 0;
  size_t capacity_ = 0;                    // bytes each posted receive holds; 0: none posted
  std::vector<std::vector<char>> frames_;  // by rank (this rank's stays empty)
  std::vector<std::unique_ptr<::gloo::transport::UnboundBuffer>> receives_;  // by rank
  std::exception_ptr post_failure_;  // a post that failed after an exchange, with its peer
  int post_failure_peer_ = -1;
  size_t exchanges_preposted_ = 0;
  size_t posts_abandoned_ = 0;
};

}  // namespace runrun::gloo_backend
