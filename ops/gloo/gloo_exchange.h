#pragma once
// Why: the one transfer pattern every gloo collective of runrun is built from: a set of
// point-to-point sends and receives with other ranks of a mesh, all posted at once (receives
// first), then waited for through the Guard (abort, deadline, errors naming the peer). Posting
// everything before waiting lets every rank make progress whatever order peers arrive in.
// Threading contract: the backend's one driving thread.

#include <cstddef>
#include <vector>

#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"

namespace runrun::gloo_backend {

// `bytes` at `data` to or from rank `peer` (never this rank). Empty transfers are skipped.
struct Transfer {
  int peer;
  void* data;
  size_t bytes;
};

// Collective in the sense that every rank of `mesh` calls it for the same step (it draws one
// slot); every send must match the peer's receive of the same size in that step.
void exchange(Mesh& mesh, Guard& guard, const char* op, Guard::Clock::time_point deadline,
              const std::vector<Transfer>& sends, const std::vector<Transfer>& receives);

}  // namespace runrun::gloo_backend
