#pragma once
// Why: hierarchical allreduce of CUDA tensors (issue 11 point 5; docs/gpu.md "Hierarchical
// allreduce"): as hierarchical_backend.h does for CPU tensors, an allreduce goes as a
// reduce-scatter inside each host, an allreduce across hosts between the ranks at the same place
// in their hosts, and an allgather inside each host — here over sub-backends of a flat
// DeviceBackend (the NCCL backend: create_subgroup gives a communicator of the host's ranks and
// one of the ranks at this place on every host), on the device, stream-ordered on runrun's stream.
// The stage across hosts may instead be a StagedAllreduceBackend (staged_allreduce_backend.h:
// the slice through pinned host memory over subgroups of MPI or Gloo;
// RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=staging): an op whose scaling it cannot do runs flat.
// Scaling (prescale, postscale, average) is applied once, by the across-hosts stage: the
// reduce-scatter reduces plainly, then the allreduce of the host sums multiplies by the factor
// (an average's 1/size of the whole group folded in), so the result is the flat one's.
// Uneven counts: the slices are even_split(count, local_size) (ops/base/block_layout.h), the
// reduce-scatter and the allgather of uneven blocks are the flat backend's.
// Everything else (other collectives, subgroups, the control channel) goes to the flat backend
// (FlatForwardingDevice, flat_forwarding.h).
// Reduction order: inside each host in rank order, then across hosts (as the CPU form).
// Failure: the stages run one after the other; a rank whose stage failed aborts its other
// communicators, so a dead peer fails the op on every rank (none completes with a partial sum).
// Threading contract: Backend's; abort() reaches the flat backend and both sub-backends.

#include <memory>
#include <string>
#include <vector>

#include "ops/device_backend.h"
#include "ops/hierarchical/flat_forwarding.h"
#include "ops/hierarchical_switch.h"

namespace runrun {

// make_hierarchical_device (ops/device_backend.h) builds one.
class HierarchicalDeviceBackend final : public FlatForwardingDevice, public HierarchicalSwitch {
 public:
  HierarchicalDeviceBackend(std::unique_ptr<DeviceBackend> flat,
                            std::unique_ptr<DeviceBackend> local,
                            std::unique_ptr<DeviceBackend> cross);
  ~HierarchicalDeviceBackend() override;

  // While switched on and `flat` can do the scaling: the three stages; otherwise flat.
  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override;
  CompletionPtr start_allreduce_scaled(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                       DataType type, ReduceOp op,
                                       const DeviceReduceScaling& scaling) override;

  // Off: allreduce goes flat too. The core sets it from the CPU backend's switch before each
  // allreduce bucket (the autotuner's, RUNRUN_AUTOTUNE), so CUDA and CPU tensors follow one
  // setting. Driving thread only; every rank switches before the same collective.
  void set_hierarchical(bool enabled) override { enabled_ = enabled; }
  bool hierarchical() const override { return enabled_; }

  const DeviceBackend& local() const { return *local_; }
  const DeviceBackend& cross() const { return *cross_; }

 protected:
  void abort_transport() override;

 private:
  void* slice(size_t bytes);  // device memory for this rank's slice (driving thread)

  std::unique_ptr<DeviceBackend> local_;
  std::unique_ptr<DeviceBackend> cross_;
  void* slice_ = nullptr;  // on flat_->device(), slice_bytes_ long; freed on runrun's stream
  size_t slice_bytes_ = 0;
  bool enabled_ = true;  // driving thread
};

}  // namespace runrun
