#pragma once
// Why: a hierarchical backend — of CPU tensors (hierarchical_backend.h) or of CUDA tensors
// (hierarchical_device_backend.h) — changes how allreduce runs and nothing else: the other
// collectives, the control channel, process sets (they run flat), name, topology and, for CUDA
// tensors, the device and what it can scale are its flat backend's. This base forwards all of
// that to `flat_` once, so each hierarchical class holds only what is hierarchical (its
// sub-backends, its switch, its allreduce). `B` is Backend (FlatForwarding<Backend>) or, for
// the device form, DeviceBackend through FlatForwardingDevice, which adds the device-only calls.
// Threading contract: Backend's — a derived class is driven by one thread, which drives `flat_`
// through it; name(), topology(), rank(), size() (and device()) from any thread; abort() from any
// thread aborts `flat_` (a derived class that owns more transports overrides abort_transport()
// and calls this one too).

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/backend.h"
#include "ops/device_backend.h"

namespace runrun {

template <class B>
class FlatForwarding : public B {
 public:
  using CompletionPtr = Backend::CompletionPtr;

  std::string_view name() const override { return flat_->name(); }
  const Topology& topology() const override { return flat_->topology(); }

  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override {
    return flat_->start_allreduce(in, out, count, type, op);
  }
  CompletionPtr start_allgatherv(ConstDeviceBuffer in, size_t send_bytes, DeviceBuffer out,
                                 const std::vector<size_t>& recv_bytes) override {
    return flat_->start_allgatherv(in, send_bytes, out, recv_bytes);
  }
  CompletionPtr start_broadcast(DeviceBuffer buffer, size_t bytes, int root) override {
    return flat_->start_broadcast(buffer, bytes, root);
  }
  CompletionPtr start_alltoallv(ConstDeviceBuffer in, const std::vector<size_t>& send_bytes,
                                DeviceBuffer out, const std::vector<size_t>& recv_bytes) override {
    return flat_->start_alltoallv(in, send_bytes, out, recv_bytes);
  }
  CompletionPtr start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                    const std::vector<size_t>& recv_counts, DataType type,
                                    ReduceOp op) override {
    return flat_->start_reducescatter(in, out, recv_counts, type, op);
  }
  CompletionPtr start_barrier() override { return flat_->start_barrier(); }
  std::unique_ptr<ControlChannel> create_control_channel() override {
    return flat_->create_control_channel();
  }
  // Process sets other than the global one run flat (the flat backend's subgroup).
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override {
    return flat_->create_subgroup(ranks);
  }

 protected:
  explicit FlatForwarding(std::unique_ptr<B> flat) : flat_(std::move(flat)) {}
  void abort_transport() override { flat_->abort(); }

  std::unique_ptr<B> flat_;
};

// The device form: FlatForwarding plus DeviceBackend's own calls, forwarded as well.
class FlatForwardingDevice : public FlatForwarding<DeviceBackend> {
 public:
  int device() const override { return flat_->device(); }
  bool can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& scaling) const override {
    return flat_->can_scale(type, op, scaling);
  }
  CompletionPtr start_allreduce_scaled(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                       DataType type, ReduceOp op,
                                       const DeviceReduceScaling& scaling) override {
    return flat_->start_allreduce_scaled(in, out, count, type, op, scaling);
  }
  CompletionPtr start_reducescatter_scaled(ConstDeviceBuffer in, DeviceBuffer out,
                                           const std::vector<size_t>& recv_counts, DataType type,
                                           ReduceOp op,
                                           const DeviceReduceScaling& scaling) override {
    return flat_->start_reducescatter_scaled(in, out, recv_counts, type, op, scaling);
  }

 protected:
  using FlatForwarding<DeviceBackend>::FlatForwarding;
};

}  // namespace runrun
