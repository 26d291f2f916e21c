#pragma once
// Why: the one transfer pattern every gloo collective of runrun is built from: a set of
// point-to-point sends and receives with other ranks of a mesh, all posted at once (receives
// first), then waited for through the Guard (abort, deadline, errors naming the peer). Posting
// everything before waiting lets every rank make progress whatever order peers arrive in.
// PostedExchange splits post and wait, so a caller can work on each receive as soon as it has
// completed (reduce one segment while later segments are still on the wire).
// Threading contract: the backend's one driving thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <gloo/transport/unbound_buffer.h>

#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"

namespace runrun::gloo_backend {

// `bytes` at `data` to or from rank `peer` (never this rank). Empty transfers are skipped.
// `lane` (< kLanes) tells apart several transfers between the same two ranks in one step: a
// send matches the peer's receive of the same lane.
struct Transfer {
  int peer;
  void* data;
  size_t bytes;
  uint8_t lane = 0;
};

inline constexpr size_t kLanes = 64;

// Collective in the sense that every rank of `mesh` calls it for the same step (it draws one
// slot); every send must match the peer's receive of the same size and lane in that step.
// Everything is posted by the constructor; the destructor does not wait (call finish()).
class PostedExchange {
 public:
  PostedExchange(Mesh& mesh, Guard& guard, const char* op, Guard::Clock::time_point deadline,
                 const std::vector<Transfer>& sends, const std::vector<Transfer>& receives);

  // Waits for receives[index] (as passed to the constructor); returns at once when it is empty
  // or already waited for.
  void wait_receive(size_t index);
  // Waits for every receive not yet waited for, then for every send.
  void finish();

 private:
  struct Posted {
    std::unique_ptr<::gloo::transport::UnboundBuffer> buffer;  // null: nothing to move
    int peer;
    bool done = false;
  };

  Guard& guard_;
  const char* op_;
  Guard::Clock::time_point deadline_;
  std::vector<Posted> receives_;
  std::vector<Posted> sends_;
};

// Posts and waits for every transfer of one step (PostedExchange, then finish()).
void exchange(Mesh& mesh, Guard& guard, const char* op, Guard::Clock::time_point deadline,
              const std::vector<Transfer>& sends, const std::vector<Transfer>& receives);

}  // namespace runrun::gloo_backend
