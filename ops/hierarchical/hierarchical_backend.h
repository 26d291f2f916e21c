#pragma once
// Why: across hosts, a flat allreduce sends every byte of every rank over the network; the
// hierarchical form (Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE, here for CPU tensors) moves
// only 1/local_size of it per rank: a reduce-scatter inside each host (shared memory under
// gloo, Open MPI's vader under mpi), an allreduce across hosts between the ranks that hold the
// same slice (one per host), and an allgather inside each host. This decorator does that over
// sub-backends of any flat backend (Backend v2's create_subgroup); everything else (the other
// collectives, non-CPU buffers, the control channel, process sets) goes to the flat backend
// (FlatForwarding, flat_forwarding.h).
//
// Topology (the launcher's, as Backend::topology() reports it): a host is the set of ranks with
// one host index, the cross_rank (Horovod's: a rank's index among the ranks of its local_rank,
// which is its host's index when hosts hold consecutive or round-robin ranks); a rank's place
// in its host is its position in that set, in rank order.
// Reduction order: each element is reduced inside its host (the host's ranks in rank order),
// then across hosts: every rank gets the same bits, which may differ in the last bits of a
// float from the flat backend's order.
// Threading contract: Backend's; abort() reaches the flat backend and both sub-backends.

#include <memory>
#include <string>
#include <vector>

#include "ops/backend.h"
#include "ops/hierarchical/flat_forwarding.h"
#include "ops/hierarchical_switch.h"

namespace runrun {

// Collective over every rank of `flat`: exchanges the ranks' topologies over it. Returns a
// hierarchical backend when the job is a full grid of at least two hosts with at least two
// ranks each (every host the same number of ranks); otherwise returns `flat` unchanged and
// sets *why_not (every rank decides alike).
std::unique_ptr<Backend> make_hierarchical(std::unique_ptr<Backend> flat, std::string* why_not);

class HierarchicalBackend final : public FlatForwarding<Backend>, public HierarchicalSwitch {
 public:
  HierarchicalBackend(std::unique_ptr<Backend> flat, std::unique_ptr<Backend> local,
                      std::unique_ptr<Backend> cross);

  // CPU buffers while switched on: the three steps; anything else: flat.
  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override;

  // Off: allreduce goes flat too (the autotuner's switch, RUNRUN_AUTOTUNE). Driving thread
  // only; every rank switches before the same collective.
  void set_hierarchical(bool enabled) override { enabled_ = enabled; }
  bool hierarchical() const override { return enabled_; }

  const Backend& local() const { return *local_; }
  const Backend& cross() const { return *cross_; }

 protected:
  void abort_transport() override;

 private:
  std::unique_ptr<Backend> local_;  // the ranks of this host, in rank order
  std::unique_ptr<Backend> cross_;  // one rank per host: those at this rank's place in theirs
  std::vector<char> slice_;         // this rank's slice between the three steps (driving thread)
  bool enabled_ = true;             // driving thread
};

}  // namespace runrun
