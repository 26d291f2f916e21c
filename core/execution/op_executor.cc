#include "core/execution/op_executor.h"

#include <numeric>

#include "core/negotiation/collective_layout.h"
#include "core/execution/device_staging.h"
#include "core/timeline/timeline_names.h"
#include "ops/adasum/adasum_allreduce.h"
#include "ops/cpu/cpu_device_ops.h"
#include "ops/device_ops.h"

namespace runrun {

ReduceOp backend_reduce_op(ReduceOp op) { return op == ReduceOp::kAverage ? ReduceOp::kSum : op; }

OpExecutor::OpExecutor(Transport& transport, const Config& config, Logger logger,
                       Timeline* timeline)
    : transport_(transport),
      backend_(*transport.data),
      fusion_threshold_(config.fusion_threshold),
      join_average_by_contributors_(config.join_average_by_contributors),
      logger_(std::move(logger)),
      timeline_(timeline),
      device_(transport, config, logger_) {}

namespace {

std::string rank_list(const std::vector<int64_t>& ranks) {
  std::string s;
  for (int64_t r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

// Timeline spans over the members of a bucket; a no-op when the timeline is off.
class BucketSpans {
 public:
  BucketSpans(Timeline* timeline, const ResponseList& responses, const FusionBucket& bucket)
      : timeline_(timeline && timeline->active() ? timeline : nullptr),
        responses_(responses),
        bucket_(bucket) {}
  void begin(std::string_view phase) const {
    if (!timeline_) return;
    for (size_t m : bucket_.members) {
      const Response& r = responses_[m];
      Timeline::Args args{{"bytes", std::to_string(response_bytes(r))},
                          {"fused_with", std::to_string(bucket_.members.size() - 1)}};
      if (!r.late_ranks.empty()) args.emplace_back("late_ranks", rank_list(r.late_ranks));
      if (!r.joined_ranks.empty()) args.emplace_back("joined_ranks", rank_list(r.joined_ranks));
      timeline_->begin(timeline_row_name(r.op, r.name), phase, args);
    }
  }
  void end(std::string_view phase) const {
    if (!timeline_) return;
    for (size_t m : bucket_.members) {
      timeline_->end(timeline_row_name(responses_[m].op, responses_[m].name), phase);
    }
  }

 private:
  Timeline* timeline_;
  const ResponseList& responses_;
  const FusionBucket& bucket_;
};

}  // namespace

void OpExecutor::execute(const ResponseList& responses,
                         std::vector<std::unique_ptr<TensorEntry>>& entries) {
  RUNRUN_CHECK_OWNER_THREAD(owner_);
  for (const FusionBucket& bucket : plan_fusion(responses, fusion_threshold_)) {
    const Response& first = responses[bucket.members[0]];
    BucketSpans spans(timeline_, responses, bucket);
    spans.end("QUEUE");
    // Inside the op's span (begun at agreement, ended here with all it holds): the transport's
    // part, "GLOO_ALLREDUCE", or "DEVICE_ALLREDUCE" for device tensors (NCCL or staging).
    const std::string op_phase = timeline_op_phase(first.op);
    spans.begin(timeline_activity(first.device.device_type == kDLCPU ? backend_.name() : "device",
                                  first.op));
    struct EndSpan {
      const BucketSpans& spans;
      const std::string& phase;
      ~EndSpan() { spans.end(phase); }
    } end_span{spans, op_phase};
    if (!first.ok()) {
      if (auto& entry = entries[bucket.members[0]]) {
        entry->handle->fail(first.error_code, first.error);
      }
      continue;
    }
    // CUDA tensors over NCCL where it can (core/execution/device_collectives.h); else on pinned
    // host
    // copies (core/execution/device_staging.h); host ones as they are.
    if (device_.run(responses, bucket, entries)) {
      if (bucket.fused()) ++fused_collectives_;
      complete_members(bucket, entries);
      continue;
    }
    DeviceStaging staging(responses, bucket, entries);
    const ResponseList& staged = staging.responses();
    const Response& op = staged[bucket.members[0]];
    TensorEntry* entry = entries[bucket.members[0]].get();
    if (first.op == OpType::kAllreduce) {  // joined ranks take part without entries
      run_allreduce_bucket(staged, bucket, entries);
      staging.finish();
      complete_members(bucket, entries);
      continue;
    }
    if (!entry) {
      throw InternalError(RUNRUN_WHERE, "rank " + std::to_string(backend_.rank()) +
                                            " has no entry for agreed " + op_type_name(first.op) +
                                            " of tensor '" + first.name + "'");
    }
    switch (first.op) {
      case OpType::kAllreduce:
        break;  // handled above
      case OpType::kAllgather:
        run_allgather(op, *entry);
        break;
      case OpType::kBroadcast:
        run_broadcast(op, *entry);
        break;
      case OpType::kAlltoall:
        run_alltoall(op, *entry);
        break;
      case OpType::kReducescatter:
        run_reducescatter(op, *entry);
        break;
      case OpType::kBarrier:
        backend_.start_barrier()->wait();
        break;
      case OpType::kJoin:
        entry->handle->set_result(first.root);
        break;
      case OpType::kNotice:
      case OpType::kStallShutdown:
        break;  // never reach the executor (the Controller takes them)
      case OpType::kProcessSetAdd:
      case OpType::kProcessSetRemove:
        if (!run_action(*entry)) continue;
        break;
    }
    staging.finish();
    complete_members(bucket, entries);
  }
}

void OpExecutor::complete_members(const FusionBucket& bucket,
                                  const std::vector<std::unique_ptr<TensorEntry>>& entries) {
  completed_.clear();
  for (size_t member : bucket.members) {
    if (entries[member] && entries[member]->handle->complete_part_quietly()) {
      completed_.push_back(entries[member]->handle.get());
    }
  }
  for (const Handle* handle : completed_) handle->notify_done();
}

bool OpExecutor::run_action(TensorEntry& entry) {
  try {
    entry.action(transport_, *entry.handle);
    return true;
  } catch (const InvalidArgumentError& e) {  // the same on every rank: checked before any I/O
    entry.handle->fail(e.code(), e.what());
    return false;
  }
}

int64_t OpExecutor::average_divisor(const Response& response) const {
  if (!join_average_by_contributors_) return backend_.size();  // joined ranks added zeros
  return backend_.size() - static_cast<int64_t>(response.joined_ranks.size());
}

void OpExecutor::finish_reduction(const Response& response, DLDevice device, void* data,
                                  size_t count) const {
  const DeviceOps& ops = device_ops_for(device);
  double postscale = response.postscale;
  if (response.reduce_op == ReduceOp::kAverage) {
    const int64_t divisor = average_divisor(response);
    if (is_floating_point(response.dtype)) {
      ops.divide(data, count, response.dtype, divisor);
    } else {  // one truncating scale by postscale / size, as Horovod averages integers
      postscale /= static_cast<double>(divisor);
    }
  }
  if (postscale != 1.0) ops.scale(data, count, response.dtype, postscale);
}

void OpExecutor::reduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, const Response& r,
                        std::span<const size_t> tensor_counts) {
  if (r.reduce_op != ReduceOp::kAdasum) {
    backend_.start_allreduce(in, out, count, r.dtype, backend_reduce_op(r.reduce_op))->wait();
    return;
  }
  // Host memory only (enqueue_checks: check_adasum).
  if (in.data != out.data) {
    device_ops_for(out.device).copy(out.data, in.data, count * element_size(r.dtype));
  }
  adasum_allreduce(backend_, out.data, r.dtype, tensor_counts, adasum_scratch_);
}

void OpExecutor::run_single_allreduce(const Response& r, TensorEntry* entry_or_null) {
  const DeviceOps& ops = device_ops_for(r.device);
  if (!entry_or_null) {  // this rank joined: contribute zeros, keep nothing
    // Host memory: joined ranks have no tensor, and non-cpu devices are refused at enqueue.
    AlignedBytes zeros = allocate_aligned(response_bytes(r));
    cpu::cpu_device_ops().zero(zeros.get(), response_bytes(r));
    size_t n = num_elements(r.shape);
    const DeviceBuffer buffer = cpu_buffer(static_cast<void*>(zeros.get()));
    reduce(buffer, buffer, n, r, {&n, 1});
    return;
  }
  TensorEntry& entry = *entry_or_null;
  size_t count = entry.input.num_elements();
  const void* in = entry.input.data;
  void* out = entry.output.data;
  if (r.prescale != 1.0) {
    if (in != out) ops.copy(out, in, entry.input.num_bytes());
    ops.scale(out, count, r.dtype, r.prescale);
    in = out;
  }
  reduce({in, entry.input.device}, {out, entry.output.device}, count, r, {&count, 1});
  finish_reduction(r, entry.output.device, out, count);
}

void OpExecutor::run_allreduce_bucket(const ResponseList& responses, const FusionBucket& bucket,
                                      std::vector<std::unique_ptr<TensorEntry>>& entries) {
  const Response& first = responses[bucket.members[0]];
  if (!bucket.fused()) {
    run_single_allreduce(first, entries[bucket.members[0]].get());
    return;
  }
  BucketSpans spans(timeline_, responses, bucket);
  // Every member is on first.device (the planner never fuses across devices); the fusion
  // buffer is host memory, which is all a bucket can be on until a GPU backend brings a device
  // fusion buffer.
  const DeviceOps& ops = device_ops_for(first.device);
  spans.begin("MEMCPY_IN_FUSION_BUFFER");
  std::byte* buffer = fusion_buffer_.get(bucket.bytes);
  size_t offset = 0;
  bucket_tensor_counts_.clear();  // Adasum's per-tensor coefficients need the tensors' lengths
  for (size_t member : bucket.members) {
    const TensorEntry* entry = entries[member].get();
    size_t bytes = response_bytes(responses[member]);
    if (first.reduce_op == ReduceOp::kAdasum) {
      bucket_tensor_counts_.push_back(num_elements(responses[member].shape));
    }
    if (entry) {
      ops.copy(buffer + offset, entry->input.data, bytes);
    } else {
      ops.zero(buffer + offset, bytes);  // joined rank
    }
    offset += bytes;
  }
  size_t count = bucket.bytes / element_size(first.dtype);
  spans.end("MEMCPY_IN_FUSION_BUFFER");
  if (first.prescale != 1.0) ops.scale(buffer, count, first.dtype, first.prescale);
  const DeviceBuffer fused{buffer, first.device};
  reduce(fused, fused, count, first, bucket_tensor_counts_);
  finish_reduction(first, first.device, buffer, count);
  spans.begin("MEMCPY_OUT_FUSION_BUFFER");
  offset = 0;
  for (size_t member : bucket.members) {
    size_t bytes = response_bytes(responses[member]);
    if (TensorEntry* entry = entries[member].get()) {
      ops.copy(entry->output.data, buffer + offset, bytes);
    }
    offset += bytes;
  }
  spans.end("MEMCPY_OUT_FUSION_BUFFER");
  ++fused_collectives_;
}

void OpExecutor::run_allgather(const Response& r, TensorEntry& entry) {
  const AllgatherLayout layout = allgather_layout(entry.input.shape, r.dtype, r.first_dims);
  OwnedTensor out = OwnedTensor::allocate(r.dtype, layout.out_shape);
  backend_
      .start_allgatherv({entry.input.data, entry.input.device}, entry.input.num_bytes(),
                        cpu_buffer(static_cast<void*>(out.storage.get())), layout.recv_bytes)
      ->wait();
  entry.handle->set_output(entry.handle_index, std::move(out));
}

void OpExecutor::run_broadcast(const Response& r, TensorEntry& entry) {
  if (backend_.rank() == r.root && entry.input.data != entry.output.data) {
    device_ops_for(r.device).copy(entry.output.data, entry.input.data, entry.input.num_bytes());
  }
  backend_
      .start_broadcast({entry.output.data, entry.output.device}, entry.output.num_bytes(), r.root)
      ->wait();
}

void OpExecutor::run_alltoall(const Response& r, TensorEntry& entry) {
  // first_dims holds every rank's splits, rank-major (collective_layout.h).
  AlltoallLayout layout =
      alltoall_layout(entry.input.shape, r.dtype, r.first_dims, backend_.rank(), backend_.size());
  OwnedTensor out = OwnedTensor::allocate(r.dtype, layout.out_shape);
  backend_
      .start_alltoallv({entry.input.data, entry.input.device}, layout.send_bytes,
                       cpu_buffer(static_cast<void*>(out.storage.get())), layout.recv_bytes)
      ->wait();
  entry.handle->set_output(entry.handle_index, std::move(out));
  entry.handle->set_received_splits(std::move(layout.received));
}

void OpExecutor::run_reducescatter(const Response& r, TensorEntry& entry) {
  const ReducescatterLayout layout =
      reducescatter_layout(entry.input.shape, backend_.rank(), backend_.size());
  const size_t my_count = layout.recv_counts[static_cast<size_t>(backend_.rank())];
  ConstDeviceBuffer in{entry.input.data, entry.input.device};
  AlignedBytes scaled;
  if (r.prescale != 1.0) {  // a host staging copy: inputs are host memory (checked at enqueue)
    const DeviceOps& ops = device_ops_for(r.device);
    scaled = allocate_aligned(entry.input.num_bytes());
    ops.copy(scaled.get(), entry.input.data, entry.input.num_bytes());
    ops.scale(scaled.get(), entry.input.num_elements(), r.dtype, r.prescale);
    in = cpu_buffer(static_cast<const void*>(scaled.get()));
  }
  OwnedTensor out = OwnedTensor::allocate(r.dtype, layout.out_shape);
  backend_
      .start_reducescatter(in, cpu_buffer(static_cast<void*>(out.storage.get())),
                           layout.recv_counts, r.dtype, backend_reduce_op(r.reduce_op))
      ->wait();
  finish_reduction(r, kCpuDevice, out.storage.get(), my_count);  // runtime-allocated output
  entry.handle->set_output(entry.handle_index, std::move(out));
}

}  // namespace runrun
