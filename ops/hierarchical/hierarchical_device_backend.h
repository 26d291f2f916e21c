#pragma once
// Why: hierarchical allreduce of CUDA tensors (issue 11 point 5; docs/gpu.md "Hierarchical
// allreduce"): as hierarchical_backend.h does for CPU tensors, an allreduce goes as a
// reduce-scatter inside each host, an allreduce across hosts between the ranks at the same place
// in their hosts, and an allgather inside each host — here over sub-backends of a flat
// DeviceBackend (the NCCL backend: create_subgroup gives a communicator of the host's ranks and
// one of the ranks at this place on every host), on the device, stream-ordered on runrun's stream.
// Scaling (prescale, postscale, average) is applied once, by the across-hosts stage: the
// reduce-scatter reduces plainly, then the allreduce of the host sums multiplies by the factor
// (an average's 1/size of the whole group folded in), so the result is the flat one's.
// Uneven counts: the slices are even_split(count, local_size) (block_layout.h), the
// reduce-scatter and the allgather of uneven blocks are the flat backend's.
// Everything else (other collectives, subgroups, the control channel) goes to the flat backend.
// Reduction order: inside each host in rank order, then across hosts (as the CPU form).
// Failure: the stages run one after the other; a rank whose stage failed aborts its other
// communicators, so a dead peer fails the op on every rank (none completes with a partial sum).
// Threading contract: Backend's; abort() reaches the flat backend and both sub-backends.

#include <memory>
#include <string>
#include <vector>

#include "ops/device_backend.h"
#include "ops/hierarchical_switch.h"

namespace runrun {

// make_hierarchical_device (ops/device_backend.h) builds one.
class HierarchicalDeviceBackend final : public DeviceBackend, public HierarchicalSwitch {
 public:
  HierarchicalDeviceBackend(std::unique_ptr<DeviceBackend> flat,
                            std::unique_ptr<DeviceBackend> local,
                            std::unique_ptr<DeviceBackend> cross);
  ~HierarchicalDeviceBackend() override;

  std::string_view name() const override { return flat_->name(); }
  const Topology& topology() const override { return flat_->topology(); }
  int device() const override { return flat_->device(); }

  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                DataType type, ReduceOp op) override;
  CompletionPtr start_allgatherv(ConstDeviceBuffer in, size_t send_bytes, DeviceBuffer out,
                                 const std::vector<size_t>& recv_bytes) override;
  CompletionPtr start_broadcast(DeviceBuffer buffer, size_t bytes, int root) override;
  CompletionPtr start_alltoallv(ConstDeviceBuffer in, const std::vector<size_t>& send_bytes,
                                DeviceBuffer out, const std::vector<size_t>& recv_bytes) override;
  CompletionPtr start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                    const std::vector<size_t>& recv_counts, DataType type,
                                    ReduceOp op) override;
  CompletionPtr start_barrier() override;

  bool can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& scaling) const override;
  CompletionPtr start_allreduce_scaled(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                       DataType type, ReduceOp op,
                                       const DeviceReduceScaling& scaling) override;
  CompletionPtr start_reducescatter_scaled(ConstDeviceBuffer in, DeviceBuffer out,
                                           const std::vector<size_t>& recv_counts, DataType type,
                                           ReduceOp op,
                                           const DeviceReduceScaling& scaling) override;

  std::unique_ptr<ControlChannel> create_control_channel() override;
  // Process sets other than the global one run flat (the flat backend's subgroup).
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override;

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

  std::unique_ptr<DeviceBackend> flat_;
  std::unique_ptr<DeviceBackend> local_;
  std::unique_ptr<DeviceBackend> cross_;
  void* slice_ = nullptr;  // on flat_->device(), slice_bytes_ long; freed on runrun's stream
  size_t slice_bytes_ = 0;
  bool enabled_ = true;  // driving thread
};

}  // namespace runrun
