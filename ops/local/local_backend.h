#pragma once
// Why: a complete Backend for N ranks that are threads of one process, so the core's unit tests
// (and the conformance suite) run without processes or MPI. Create the world once and one
// backend per rank thread:
//   auto world = std::make_shared<LocalWorld>(4);
//   LocalBackend backend(world, rank);   // in rank `rank`'s thread
// Each collective copies its input, meets the other ranks in the world and computes this rank's
// result from everyone's copies (reductions in rank order, so results are identical on every
// rank). It is built for correctness, not speed: every rank reduces the whole buffer.
//
// Threading contract: as Backend: one driving thread per backend; abort() from any thread.
// Ranks that pass different collectives (op, dtype, count, root) all get MismatchError.

#include <memory>
#include <string_view>
#include <vector>

#include "ops/backend.h"
#include "ops/local/local_control_channel.h"
#include "ops/local/local_endpoint.h"
#include "ops/local/local_world.h"

namespace runrun {

class LocalBackend final : public Backend {
 public:
  LocalBackend(std::shared_ptr<LocalWorld> world, int rank);

  std::string_view name() const override { return "local"; }
  const Topology& topology() const override { return topology_; }

  void allreduce(const void* in, void* out, size_t count, DataType type, ReduceOp op) override;
  void allgatherv(const void* in, size_t send_bytes, void* out,
                  const std::vector<size_t>& recv_bytes) override;
  void broadcast(void* buffer, size_t bytes, int root) override;
  void alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                 const std::vector<size_t>& recv_bytes) override;
  void reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                     DataType type, ReduceOp op) override;
  void barrier() override;
  ControlChannel& control() override { return control_; }
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override;
  void abort() override;

  const std::shared_ptr<LocalWorld>& world() const { return endpoint_->world(); }

 private:
  std::shared_ptr<LocalEndpoint> endpoint_;
  Topology topology_;
  LocalControlChannel control_;
};

}  // namespace runrun
