#pragma once
// Why: the Backend over Open MPI for real multi-process (and multi-host) jobs. It owns a
// duplicate of its group's communicator for data collectives; create_control_channel() dups it
// again for a control channel the caller owns, so the two kinds of traffic never match each
// other's messages. Both use MPI_ERRORS_RETURN and every MPI call is checked
// (RUNRUN_MPI_CHECK). Collectives are posted non-blocking and return an MpiCompletion over the
// posted requests, completed through an MpiWaiter, which blocks politely, honours abort() and
// the collective timeout. Buffers must be host memory (UnsupportedError otherwise).
// MPI's own lifetime is handled by mpi_lifetime.h (initialized on first use, finalized at exit,
// never by a destructor), so runtimes can be created and destroyed repeatedly.
// The topology is derived from each rank's host (ops/base/host_topology.h): the world backend
// learns the hosts once (MPI_Comm_split_type, then a non-blocking allgather); a subgroup takes its
// members' hosts from its parent and makes no collective call after its communicator exists, so
// a member stopped right after the creation cannot hold the others in a blocking MPI call.
//
// Threading contract: as Backend: one driving thread; abort() from any thread. Different
// MpiBackend objects (e.g. subgroups) may be driven by different threads (MPI_THREAD_MULTIPLE).

#include <mpi.h>

#include <chrono>
#include <climits>
#include <memory>
#include <string_view>
#include <vector>

#include "common/logging.h"
#include "ops/backend.h"
#include "ops/mpi/mpi_completion.h"
#include "ops/mpi/mpi_waiter.h"

namespace runrun::mpi {

struct MpiBackendOptions {
  Logger logger;                                    // may be null
  std::chrono::milliseconds collective_timeout{0};  // 0: no limit
  // Largest element count passed to one MPI call; larger collectives are chunked (allreduce,
  // broadcast, reducescatter) or moved in bigger blocks (allgatherv, alltoallv). Only tests
  // lower it, to exercise those paths with small buffers.
  size_t max_count_per_call = INT_MAX;
};

class MpiBackend final : public Backend {
 public:
  // A backend over MPI_COMM_WORLD; initializes MPI when nobody has. Collective over all
  // processes of MPI_COMM_WORLD.
  explicit MpiBackend(MpiBackendOptions options = {});
  ~MpiBackend() override;
  MpiBackend(const MpiBackend&) = delete;
  MpiBackend& operator=(const MpiBackend&) = delete;

  std::string_view name() const override { return "mpi"; }
  const Topology& topology() const override { return topology_; }

  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override;
  CompletionPtr start_allgatherv(ConstDeviceBuffer in, size_t send_bytes, DeviceBuffer out,
                                 const std::vector<size_t>& recv_bytes) override;
  CompletionPtr start_broadcast(DeviceBuffer buffer, size_t bytes, int root) override;
  CompletionPtr start_alltoallv(ConstDeviceBuffer in, const std::vector<size_t>& send_bytes,
                                DeviceBuffer out, const std::vector<size_t>& recv_bytes) override;
  CompletionPtr start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                    const std::vector<size_t>& recv_counts, DataType type,
                                    ReduceOp op) override;
  CompletionPtr start_barrier() override;
  // Collective (MPI_Comm_idup of the data communicator, completed through the waiter).
  std::unique_ptr<ControlChannel> create_control_channel() override;
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override;

 protected:
  void abort_transport() override { waiter_->abort(); }

 private:
  // Takes ownership of `group` (a communicator of this backend's ranks): it becomes the data
  // communicator. `host_of_rank`: a host key per rank of `group`; empty = learn them (collective).
  MpiBackend(MPI_Comm group, MpiBackendOptions options, std::vector<int> host_of_rank);
  std::vector<int> gather_host_of_rank();
  void reducescatter_rounds(MpiCompletion& completion, const char* in, char* out,
                            const std::vector<size_t>& counts, DataType type, ReduceOp op);

  MpiBackendOptions options_;
  MPI_Comm data_ = MPI_COMM_NULL;
  Topology topology_;
  // Per rank of data_, a key of its host: the parent communicator's rank of the host's first rank.
  std::vector<int> host_of_rank_;
  std::shared_ptr<MpiWaiter> waiter_;
};

}  // namespace runrun::mpi
