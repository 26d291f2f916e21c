#pragma once
// Why: runs the shared collective algorithms (ops/algorithms) over a Gloo mesh: each step is
// one exchange (gloo_exchange.h), waited for through the Guard (abort, deadline, errors naming
// the peer) under the collective's name.
// Threading contract: the backend's (or control channel's) one driving thread; lives for one
// collective.

#include <vector>

#include "ops/algorithms/step_transport.h"
#include "ops/gloo/gloo_exchange.h"
#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"

namespace runrun::gloo_backend {

class GlooStepTransport final : public algorithms::StepTransport {
 public:
  GlooStepTransport(Mesh& mesh, Guard& guard, const char* op, Guard::Clock::time_point deadline)
      : mesh_(mesh), guard_(guard), op_(op), deadline_(deadline) {}

  int rank() const override { return mesh_.rank(); }
  int size() const override { return mesh_.size(); }

  void step(const std::vector<algorithms::StepTransfer>& sends,
            const std::vector<algorithms::StepTransfer>& receives) override {
    exchange(mesh_, guard_, op_, deadline_, transfers(sends), transfers(receives));
  }

 private:
  static std::vector<Transfer> transfers(const std::vector<algorithms::StepTransfer>& steps) {
    std::vector<Transfer> out;
    out.reserve(steps.size());
    for (const auto& transfer : steps)
      out.push_back({transfer.peer, transfer.data, transfer.bytes});
    return out;
  }

  Mesh& mesh_;
  Guard& guard_;
  const char* op_;
  Guard::Clock::time_point deadline_;
};

}  // namespace runrun::gloo_backend
