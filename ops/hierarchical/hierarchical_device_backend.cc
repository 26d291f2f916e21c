#include "ops/hierarchical/hierarchical_device_backend.h"

#include <cstdint>
#include <cstring>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/base/block_layout.h"
#include "ops/cuda_streams.h"
#include "ops/hierarchical/hierarchy.h"
#include "ops/hierarchical/staged_allreduce_backend.h"

namespace runrun {
namespace {

// Every rank's (cross_rank, local_size, cross_size), indexed by rank, over a control channel of
// `flat` (a device backend moves no host memory).
std::vector<int32_t> exchange_topologies(DeviceBackend& flat, const Topology& t) {
  std::unique_ptr<ControlChannel> channel = flat.create_control_channel();
  const int32_t mine[3] = {t.cross_rank, t.local_size, t.cross_size};
  std::vector<std::string> each =
      channel->gather(std::string(reinterpret_cast<const char*>(mine), sizeof(mine)), 0);
  std::string joined;
  for (const std::string& bytes : each) joined += bytes;
  channel->broadcast(joined, 0);
  std::vector<int32_t> all(joined.size() / sizeof(int32_t));
  std::memcpy(all.data(), joined.data(), all.size() * sizeof(int32_t));
  return all;
}

std::unique_ptr<DeviceBackend> as_device(std::unique_ptr<Backend> backend) {
  auto* device = dynamic_cast<DeviceBackend*>(backend.get());
  RUNRUN_ENFORCE(device != nullptr, InternalError,
                 "hierarchical allreduce of CUDA tensors: a subgroup of the " +
                     std::string(backend->name()) + " backend is not a device backend");
  backend.release();
  return std::unique_ptr<DeviceBackend>(device);
}

}  // namespace

std::unique_ptr<DeviceBackend> make_hierarchical_device(std::unique_ptr<DeviceBackend> flat,
                                                        const Topology& topology,
                                                        std::string* why_not,
                                                        Backend* staged_cross) {
  HierarchySplit split =
      split_hierarchy(*flat, exchange_topologies(*flat, topology), why_not, staged_cross);
  if (!split.local) return flat;
  std::unique_ptr<DeviceBackend> cross =
      staged_cross != nullptr
          ? std::make_unique<StagedAllreduceBackend>(std::move(split.cross), flat->device())
          : as_device(std::move(split.cross));
  return std::make_unique<HierarchicalDeviceBackend>(
      std::move(flat), as_device(std::move(split.local)), std::move(cross));
}

HierarchicalDeviceBackend::HierarchicalDeviceBackend(std::unique_ptr<DeviceBackend> flat,
                                                     std::unique_ptr<DeviceBackend> local,
                                                     std::unique_ptr<DeviceBackend> cross)
    : FlatForwardingDevice(std::move(flat)), local_(std::move(local)), cross_(std::move(cross)) {}

HierarchicalDeviceBackend::~HierarchicalDeviceBackend() {
  if (slice_ != nullptr) gpu::free_async(slice_, gpu::runrun_stream(device()));
}

void* HierarchicalDeviceBackend::slice(size_t bytes) {
  if (bytes > slice_bytes_) {  // stream-ordered: earlier ops on the stream still use the old one
    const gpu::cuda_abi::Stream stream = gpu::runrun_stream(device());
    if (slice_ != nullptr) gpu::free_async(slice_, stream);
    slice_ = nullptr;
    slice_ = gpu::malloc_async(bytes, stream, device());
    slice_bytes_ = bytes;
  }
  return slice_;
}

Backend::CompletionPtr HierarchicalDeviceBackend::start_allreduce(ConstDeviceBuffer in,
                                                                  DeviceBuffer out, size_t count,
                                                                  DataType type, ReduceOp op) {
  backend_checks::check_reduce_op(*this, "allreduce", op);
  return start_allreduce_scaled(in, out, count, type, op, {});
}

Backend::CompletionPtr HierarchicalDeviceBackend::start_allreduce_scaled(
    ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type, ReduceOp op,
    const DeviceReduceScaling& scaling) {
  // Applied once, across hosts: an average is a sum times 1/(every rank of the group).
  DeviceReduceScaling across = scaling;
  if (scaling.average) across = {scaling.factor / static_cast<double>(size()), false};
  if (!enabled_ || !flat_->can_scale(type, op, scaling) ||
      !cross_->can_scale(type, op, across)) {  // flat (or its own error); the same on every rank
    return flat_->start_allreduce_scaled(in, out, count, type, op, scaling);
  }
  const size_t esize = element_size(type);
  const auto slices = even_split(count, static_cast<size_t>(local_->size()));
  const auto place = static_cast<size_t>(local_->rank());
  const size_t mine = slices[place];
  const DLDevice dev{kDLCUDA, device()};
  // Each stage is waited for before the next starts: a rank whose stage failed then never
  // starts the next one with a partial slice (which a peer in that stage's communicator would
  // take as its input), and aborts its other communicators, so every rank of the job fails the
  // op instead of some completing with wrong data or waiting for it. The cost is a host round
  // trip between stages; the device path waits for every op's end anyway.
  return run_to_completion([&] {
    try {
      void* part = slice(mine * esize);
      // Inside the host: slice `place` reduced over the host's ranks.
      local_->start_reducescatter_scaled(in, {part, dev}, slices, type, op, {})->wait();
      // Across hosts: that slice over the rank holding it on every host (every rank of the
      // cross group holds the same place, so all skip an empty slice alike).
      if (mine > 0) {
        cross_->start_allreduce_scaled({part, dev}, {part, dev}, mine, type, op, across)->wait();
      }
      // Inside the host: every reduced slice to every rank.
      std::vector<size_t> bytes(slices.size());
      for (size_t p = 0; p < slices.size(); ++p) bytes[p] = slices[p] * esize;
      local_->start_allgatherv({part, dev}, mine * esize, out, bytes)->wait();
    } catch (...) {  // the other stages' peers must not wait for this rank
      local_->abort();
      cross_->abort();
      throw;
    }
  });
}

void HierarchicalDeviceBackend::abort_transport() {
  FlatForwardingDevice::abort_transport();
  local_->abort();
  cross_->abort();
}

}  // namespace runrun
