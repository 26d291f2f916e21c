#pragma once
// Why: the across-hosts stage of the hierarchical allreduce of CUDA tensors over MPI or Gloo
// instead of NCCL (RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=staging; docs/gpu.md "Hierarchical
// allreduce"), as Horovod's NCCL hierarchical allreduce runs its cross stage over MPI: the slice
// a rank holds after the reduce-scatter inside its host is copied from the device to pinned host
// memory on runrun's stream, allreduced by a host backend among the ranks at the same place on
// every host, scaled on the host when asked, and copied back on runrun's stream. A DeviceBackend
// that does only that allreduce, so HierarchicalDeviceBackend takes it as its cross group like
// an NCCL one; every other collective is refused (UnsupportedError).
// Waits: the copy in is waited for before the host collective reads the pinned buffer (only
// that copy's event, never the device), and the copy back before the completion is returned,
// so the op has ended (and the pinned buffer is free) when it returns; errors of the host
// backend (a dead peer: PeerFailureError; abort: ShutDownError) come from the completion.
// Scaling: the host reduces plainly, then multiplies by the factor (cpu::scale_buffer) — for
// floats the rounding of a sum scaled after, not NCCL's pre-multiplied inputs.
// Threading contract: Backend's — the driving thread of the hierarchical backend, which drives
// the host backend through it; abort() from any thread aborts the host backend.

#include <memory>
#include <string_view>
#include <vector>

#include "ops/device_backend.h"

namespace runrun {

class StagedAllreduceBackend final : public DeviceBackend {
 public:
  // `host`: a backend of host memory (MPI, Gloo, local) over the ranks of this group; `device`:
  // the CUDA device whose memory the allreduces move (runrun's stream of it does the copies).
  StagedAllreduceBackend(std::unique_ptr<Backend> host, int device);

  std::string_view name() const override { return host_->name(); }
  const Topology& topology() const override { return host_->topology(); }
  int device() const override { return device_; }

  // No average (the caller folds it into the factor); a factor other than 1 only for sums of
  // floating types — what the hierarchical allreduce asks of its cross group.
  bool can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& scaling) const override;
  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override;
  CompletionPtr start_allreduce_scaled(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                       DataType type, ReduceOp op,
                                       const DeviceReduceScaling& scaling) override;
  CompletionPtr start_reducescatter_scaled(ConstDeviceBuffer in, DeviceBuffer out,
                                           const std::vector<size_t>& recv_counts, DataType type,
                                           ReduceOp op,
                                           const DeviceReduceScaling& scaling) override;

 protected:
  void abort_transport() override { host_->abort(); }

 private:
  void check_device(DLDevice device) const;

  std::unique_ptr<Backend> host_;
  int device_;
};

}  // namespace runrun
