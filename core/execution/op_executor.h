#pragma once
// Why: runs the agreed ops of a round over the data backend — one fusion bucket at a time:
// fused allreduces through the fusion buffer (copy in, prescale, one collective, average,
// postscale, copy out), a large allreduce directly on the tensor, allgather/broadcast/alltoall/
// reducescatter/barrier as themselves — and completes each entry's handle. Buffers go to the
// backend with their device; copies, scaling and the average's division go through the
// DeviceOps of the tensors' device (ops/device_ops.h); buckets of CUDA tensors run on pinned host
// copies (core/execution/device_staging.h). Each collective is started and waited
// for at once (Completion::wait), as the round's order must be kept. An error response
// fails its entries' handles; the runtime goes on. A transport error propagates to the caller.
// Thread-safety: owned by the process set's background thread.

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "common/debug_checks.h"
#include "common/logging.h"
#include "core/runtime/config.h"
#include "core/execution/device_collectives.h"
#include "core/execution/fusion_buffer.h"
#include "core/execution/fusion_planner.h"
#include "core/runtime/tensor_queue.h"
#include "core/timeline/timeline.h"
#include "ops/adasum/adasum_allreduce.h"
#include "ops/backend.h"

namespace runrun {

class OpExecutor {
 public:
  // Reads fusion_threshold and join_average_by_contributors from `config`. `timeline` may be
  // null; it must outlive the executor.
  OpExecutor(Transport& transport, const Config& config, Logger logger, Timeline* timeline);

  // entries[i] belongs to responses[i]; nullptr when this rank has no entry for it: an error
  // response (skipped), or an allreduce while this rank has joined (it contributes zeros).
  void execute(const ResponseList& responses, std::vector<std::unique_ptr<TensorEntry>>& entries);

  size_t fused_collectives() const { return fused_collectives_; }
  // Buckets of CUDA tensors run over NCCL (core/execution/device_collectives.h).
  size_t nccl_buckets() const { return device_.nccl_buckets(); }
  // Aborts the NCCL communicator, if any; any thread (the worker's abort_transport).
  void abort_device() { device_.abort(); }
  // The autotuner's switch; every rank changes it before the same round
  // (core/autotune/autotuner.h).
  void set_fusion_threshold(size_t bytes) { fusion_threshold_ = bytes; }

 private:
  void run_allreduce_bucket(const ResponseList& responses, const FusionBucket& bucket,
                            std::vector<std::unique_ptr<TensorEntry>>& entries);
  // Completes the bucket's members: all marked done first, their waiters woken after
  // (Handle::complete_part_quietly). Members without an entry (joined ranks) are skipped.
  void complete_members(const FusionBucket& bucket,
                        const std::vector<std::unique_ptr<TensorEntry>>& entries);
  void run_single_allreduce(const Response& response, TensorEntry* entry_or_null);
  // Reduces `count` elements of `in` into `out` (host or device buffers the backend takes):
  // the backend's allreduce, or for Adasum its own algorithm over the backend on host memory,
  // each of `tensor_counts` (the fused tensors' lengths) combined with its own coefficients.
  void reduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, const Response& response,
              std::span<const size_t> tensor_counts);
  // Runs a process-set change; false when it failed its handle (invalid request).
  bool run_action(TensorEntry& entry);
  void run_allgather(const Response& response, TensorEntry& entry);
  void run_broadcast(const Response& response, TensorEntry& entry);
  void run_alltoall(const Response& response, TensorEntry& entry);
  void run_reducescatter(const Response& response, TensorEntry& entry);
  // Average and postscale applied to a reduced buffer: floats are divided by the average's
  // divisor, then scaled; integers are scaled once by postscale / divisor (as Horovod).
  // Average division and postscale of `count` reduced elements at `data` on `device`.
  void finish_reduction(const Response& response, DLDevice device, void* data, size_t count) const;
  // The set size, or the ranks that contributed (RUNRUN_JOIN_AVERAGE=contributors).
  int64_t average_divisor(const Response& response) const;

  Transport& transport_;  // actions (process-set changes) get both halves
  Backend& backend_;
  size_t fusion_threshold_;
  bool join_average_by_contributors_;
  Logger logger_;
  Timeline* timeline_;
  FusionBuffer fusion_buffer_;
  AdasumScratch adasum_scratch_;  // reused by every Adasum bucket (ops/adasum/adasum_allreduce.h)
  std::vector<size_t> bucket_tensor_counts_;  // an Adasum bucket's tensor lengths, reused
  DeviceCollectives device_;                  // CUDA tensors over NCCL; the rest is staged
  std::atomic<size_t> fused_collectives_{0};
  std::vector<Handle*> completed_;  // complete_members' scratch, reused (worker thread)
  // The background thread, which alone may call execute() (and so use the fusion buffer and
  // the device collectives; checked in builds with RUNRUN_DEBUG_CHECKS: common/debug_checks.h).
  OwnerThread owner_;
};

// Backends reduce Sum for Average (the core divides afterwards).
ReduceOp backend_reduce_op(ReduceOp op);

}  // namespace runrun
