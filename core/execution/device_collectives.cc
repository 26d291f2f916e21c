#include "core/execution/device_collectives.h"

#include <algorithm>

#include "core/negotiation/collective_layout.h"
#include "core/execution/device_staging.h"
#include "core/runtime/handle.h"
#include "ops/device_ops.h"
#include "ops/hierarchical_switch.h"
#include "ops/cuda_streams.h"

namespace runrun {
namespace {

DeviceReduceScaling scaling_of(const Response& r) {
  return {r.prescale * r.postscale, r.reduce_op == ReduceOp::kAverage};
}

ReduceOp nccl_reduce_op(ReduceOp op) { return op == ReduceOp::kAverage ? ReduceOp::kSum : op; }

// An output of `dtype`/`shape` allocated on the device (see allocate_on_device).
OwnedTensor device_output(DataType dtype, std::vector<int64_t> shape, int device,
                          const TensorEntry& entry) {
  OwnedTensor like;
  like.dtype = dtype;
  like.shape = std::move(shape);
  return allocate_on_device(like, device, gpu::runrun_stream(device),
                            entry.device_sync ? entry.device_sync->stream : nullptr);
}

}  // namespace

DeviceCollectives::DeviceCollectives(Transport& transport, const Config& config, Logger logger)
    : transport_(transport),
      mode_(config.gpu_operations),
      collective_timeout_(config.collective_timeout),
      hierarchical_(config.hierarchical_allreduce || config.autotune.enabled),
      hierarchical_configured_(config.hierarchical_allreduce),
      stage_across_hosts_(config.hierarchical_allreduce_cross == "staging"),
      logger_(std::move(logger)) {}

DeviceCollectives::~DeviceCollectives() {
  if (fusion_ != nullptr && nccl_) gpu::free_async(fusion_, gpu::runrun_stream(nccl_->device()));
}

void DeviceCollectives::abort() {
  aborted_ = true;
  if (DeviceBackend* backend = published_.load()) backend->abort();
}

bool DeviceCollectives::eligible(const ResponseList& responses, const FusionBucket& bucket,
                                 const std::vector<std::unique_ptr<TensorEntry>>& entries) const {
  if (mode_ == "staging" || state_ == State::kStaging) return false;
  for (size_t m : bucket.members) {
    const Response& r = responses[m];
    if (!r.ok() || r.device.device_type != kDLCUDA || !r.joined_ranks.empty()) return false;
    if (!entries[m]) return false;  // (joined ranks are named in joined_ranks: never here)
    switch (r.op) {
      case OpType::kAllreduce:
      case OpType::kReducescatter:
        if (!nccl_can_scale(r.dtype, nccl_reduce_op(r.reduce_op), scaling_of(r))) return false;
        break;
      case OpType::kAllgather:
      case OpType::kBroadcast:
      case OpType::kAlltoall:
        break;
      default:
        return false;
    }
  }
  return true;
}

bool DeviceCollectives::ready(int device) {
  if (state_ == State::kReady) return true;
  if (aborted_) throw ShutDownError(RUNRUN_WHERE, "the process set was aborted");
  const Topology& topology = transport_.data->topology();
  const std::string why = nccl_unusable_reason();
  std::vector<uint64_t> bits{why.empty() ? 1u : 0u};
  transport_.control->allreduce_and(bits);  // every rank is at this bucket now
  if (bits[0] == 0) {
    state_ = State::kStaging;
    const std::string text =
        "CUDA tensors of this process set are staged through host memory: not every rank can "
        "use NCCL" +
        std::string(why.empty() ? "" : "; on rank " + std::to_string(topology.rank) + ": " + why);
    if (mode_ == "nccl") {
      throw UnsupportedError(RUNRUN_WHERE, "RUNRUN_GPU_OPERATIONS=nccl, but " + text);
    }
    if (logger_) logger_->info("{}", text);
    return false;
  }
  std::vector<int> all(static_cast<size_t>(topology.size));
  for (int r = 0; r < topology.size; ++r) all[static_cast<size_t>(r)] = r;
  nccl_ = make_nccl_backend(transport_.control->create_subgroup(all), topology, device,
                            collective_timeout_, logger_);
  if (hierarchical_) {  // collective too: every rank gets here with the same setting
    // (also under RUNRUN_AUTOTUNE, off until the CPU backend's switch says on: run_allreduce)
    std::string why_not;
    nccl_ = make_hierarchical_device(std::move(nccl_), topology, &why_not,
                                     stage_across_hosts_ ? transport_.data.get() : nullptr);
    if (logger_ && !why_not.empty() && hierarchical_configured_) {
      logger_->info("hierarchical allreduce of CUDA tensors is off: {}", why_not);
    }
  }
  published_ = nccl_.get();
  if (aborted_) nccl_->abort();
  state_ = State::kReady;
  return true;
}

std::byte* DeviceCollectives::fusion_buffer(size_t bytes) {
  if (bytes > fusion_bytes_) {  // stream-ordered: earlier ops on the stream still use the old one
    const gpu::cuda_abi::Stream stream = gpu::runrun_stream(nccl_->device());
    if (fusion_ != nullptr) gpu::free_async(fusion_, stream);
    fusion_ = nullptr;
    fusion_ = gpu::malloc_async(bytes, stream, nccl_->device());
    fusion_bytes_ = bytes;
  }
  return static_cast<std::byte*>(fusion_);
}

bool DeviceCollectives::run(const ResponseList& responses, const FusionBucket& bucket,
                            std::vector<std::unique_ptr<TensorEntry>>& entries) {
  if (!eligible(responses, bucket, entries)) return false;
  TensorEntry& first = *entries[bucket.members[0]];
  const int device = first.input.device.device_id;
  if (!ready(device)) return false;
  if (device != nccl_->device()) {
    throw UnsupportedError(
        RUNRUN_WHERE, "tensor '" + responses[bucket.members[0]].name + "' on rank " +
                          std::to_string(nccl_->rank()) + " is on cuda:" + std::to_string(device) +
                          ", but the NCCL communicator of its "
                          "process set is on cuda:" +
                          std::to_string(nccl_->device()) +
                          ": a rank drives one GPU (torch.cuda.set_device(local_rank()))");
  }
  gpu::DeviceGuard guard(device);
  const gpu::cuda_abi::Stream stream = gpu::runrun_stream(device);
  std::vector<gpu::cuda_abi::Stream> consumers;
  for (size_t m : bucket.members) {
    const TensorEntry& entry = *entries[m];
    if (!entry.device_sync) continue;
    entry.device_sync->produced->make_wait(stream);  // NCCL reads after the producer wrote
    if (std::find(consumers.begin(), consumers.end(), entry.device_sync->stream) ==
        consumers.end()) {
      consumers.push_back(entry.device_sync->stream);
    }
  }
  if (responses[bucket.members[0]].op == OpType::kAllreduce) {
    run_allreduce(responses, bucket, entries);
  } else {
    run_other(responses[bucket.members[0]], first);
  }
  gpu::CudaEvent done(device);  // the framework streams order their reads after the op
  done.record(stream);
  for (gpu::cuda_abi::Stream consumer : consumers) done.make_wait(consumer);
  ++nccl_buckets_;
  return true;
}

void DeviceCollectives::run_allreduce(const ResponseList& responses, const FusionBucket& bucket,
                                      std::vector<std::unique_ptr<TensorEntry>>& entries) {
  const Response& r = responses[bucket.members[0]];
  const ReduceOp op = nccl_reduce_op(r.reduce_op);
  // The autotuner switches the CPU backend's hierarchical allreduce; CUDA tensors follow it.
  auto* device_switch = dynamic_cast<HierarchicalSwitch*>(nccl_.get());
  if (device_switch != nullptr) {
    auto* host_switch = dynamic_cast<HierarchicalSwitch*>(transport_.data.get());
    device_switch->set_hierarchical(host_switch != nullptr ? host_switch->hierarchical()
                                                           : hierarchical_configured_);
  }
  const DLDevice device{kDLCUDA, nccl_->device()};
  if (!bucket.fused()) {
    TensorEntry& entry = *entries[bucket.members[0]];
    nccl_
        ->start_allreduce_scaled({entry.input.data, device}, {entry.output.data, device},
                                 entry.input.num_elements(), r.dtype, op, scaling_of(r))
        ->wait();
    return;
  }
  // Fused: through the fusion buffer in device memory, copies on runrun's stream.
  const DeviceOps& copies = device_ops_for({kDLCUDA, nccl_->device()});
  std::byte* buffer = fusion_buffer(bucket.bytes);
  size_t offset = 0;
  for (size_t m : bucket.members) {
    const size_t bytes = response_bytes(responses[m]);
    copies.copy(buffer + offset, entries[m]->input.data, bytes);
    offset += bytes;
  }
  const DeviceBuffer fused{buffer, device};
  nccl_
      ->start_allreduce_scaled(fused, fused, bucket.bytes / element_size(r.dtype), r.dtype, op,
                               scaling_of(r))
      ->wait();
  offset = 0;
  for (size_t m : bucket.members) {
    const size_t bytes = response_bytes(responses[m]);
    copies.copy(entries[m]->output.data, buffer + offset, bytes);
    offset += bytes;
  }
}

void DeviceCollectives::run_other(const Response& r, TensorEntry& entry) {
  DeviceBackend& nccl = *nccl_;
  const int size = nccl.size(), rank = nccl.rank();
  const DLDevice device{kDLCUDA, nccl.device()};
  const std::vector<int64_t>& shape = entry.input.shape;
  switch (r.op) {
    case OpType::kAllgather: {
      const AllgatherLayout layout = allgather_layout(shape, r.dtype, r.first_dims);
      OwnedTensor out = device_output(r.dtype, layout.out_shape, device.device_id, entry);
      nccl.start_allgatherv({entry.input.data, device}, entry.input.num_bytes(),
                            {out.storage.get(), device}, layout.recv_bytes)
          ->wait();
      entry.handle->set_output(entry.handle_index, std::move(out));
      return;
    }
    case OpType::kBroadcast:
      if (rank == r.root && entry.input.data != entry.output.data) {
        device_ops_for(device).copy(entry.output.data, entry.input.data, entry.input.num_bytes());
      }
      nccl.start_broadcast({entry.output.data, device}, entry.output.num_bytes(), r.root)->wait();
      return;
    case OpType::kAlltoall: {
      AlltoallLayout layout = alltoall_layout(shape, r.dtype, r.first_dims, rank, size);
      OwnedTensor out = device_output(r.dtype, layout.out_shape, device.device_id, entry);
      nccl.start_alltoallv({entry.input.data, device}, layout.send_bytes,
                           {out.storage.get(), device}, layout.recv_bytes)
          ->wait();
      entry.handle->set_output(entry.handle_index, std::move(out));
      entry.handle->set_received_splits(std::move(layout.received));
      return;
    }
    case OpType::kReducescatter: {
      const ReducescatterLayout layout = reducescatter_layout(shape, rank, size);
      OwnedTensor out = device_output(r.dtype, layout.out_shape, device.device_id, entry);
      nccl.start_reducescatter_scaled({entry.input.data, device}, {out.storage.get(), device},
                                      layout.recv_counts, r.dtype, nccl_reduce_op(r.reduce_op),
                                      scaling_of(r))
          ->wait();
      entry.handle->set_output(entry.handle_index, std::move(out));
      return;
    }
    default:
      throw InternalError(RUNRUN_WHERE, "DeviceCollectives: " + std::string(op_type_name(r.op)) +
                                            " is not an NCCL op");
  }
}

}  // namespace runrun
