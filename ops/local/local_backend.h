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
// Collectives run to the end on the calling thread and return a completed (or failed)
// Completion; buffers must be host memory (UnsupportedError otherwise). The control channel
// (create_control_channel) has its own endpoint on the world's control rendezvous.
//
// Threading contract: as Backend: one driving thread per backend; abort() from any thread.
// Ranks that pass different collectives (op, dtype, count, root) all get MismatchError.

#include <memory>
#include <string_view>
#include <vector>

#include "ops/backend.h"
#include "ops/base/host_backend.h"
#include "ops/local/local_endpoint.h"
#include "ops/local/local_world.h"

namespace runrun {

class LocalBackend final : public HostSynchronousBackend {
 public:
  LocalBackend(std::shared_ptr<LocalWorld> world, int rank);

  std::string_view name() const override { return "local"; }
  const Topology& topology() const override { return topology_; }

  std::unique_ptr<ControlChannel> create_control_channel() override;
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override;

  const std::shared_ptr<LocalWorld>& world() const { return endpoint_->world(); }

 protected:
  void abort_transport() override;

 private:
  void run_allreduce(const void* in, void* out, size_t count, DataType type, ReduceOp op) override;
  void run_allgatherv(const void* in, size_t send_bytes, void* out,
                      const std::vector<size_t>& recv_bytes) override;
  void run_broadcast(void* buffer, size_t bytes, int root) override;
  void run_alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                     const std::vector<size_t>& recv_bytes) override;
  void run_reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                         DataType type, ReduceOp op) override;
  void run_barrier() override;

  std::shared_ptr<LocalEndpoint> endpoint_;
  Topology topology_;
};

}  // namespace runrun
