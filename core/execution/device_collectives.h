#pragma once
// Why: CUDA tensors over NCCL (issue 11 point 4; docs/gpu.md "How CUDA tensors are moved"): the
// executor hands each bucket of CUDA tensors here first; what NCCL can do runs on the device —
// runrun's stream waits for the producer events, fused allreduces go through a fusion buffer in
// device memory, outputs the runtime allocates are allocated on the device, the op is one NCCL
// call (or group) on runrun's stream, its completion event is waited for (polling NCCL's
// asynchronous errors) and every framework stream of the op is made to wait on it. The rest
// (RUNRUN_GPU_OPERATIONS=staging, a rank without NCCL, a joined rank, int16, a sum of bools, an
// integer average or scale) goes on to staging (core/execution/device_staging.h).
// The NCCL communicator of the process set is made on the first bucket that needs it: every rank
// reaches that bucket at the same point of the agreed order, says over the set's CPU control
// channel whether it can use NCCL (one AND-allreduce), and only if all can, rank 0's unique id is
// broadcast over that channel and the communicator made; otherwise the set stages for good. Every
// decision depends only on agreed responses and that one agreed answer, so all ranks take the
// same path.
// Hierarchical (RUNRUN_HIERARCHICAL_ALLREDUCE or RUNRUN_AUTOTUNE): the communicator is then made
// hierarchical (ops/device_backend.h make_hierarchical_device), its stage across hosts over NCCL
// or, with RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=staging, over subgroups of the set's CPU data
// backend (transport.data) through pinned host memory.
// Threading contract: the process set's background thread; abort() from any thread.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/logging.h"
#include "core/runtime/config.h"
#include "core/execution/fusion_planner.h"
#include "core/negotiation/message.h"
#include "core/negotiation/response_list.h"
#include "core/runtime/tensor_queue.h"
#include "ops/backend.h"
#include "ops/device_backend.h"

namespace runrun {

class DeviceCollectives {
 public:
  DeviceCollectives(Transport& transport, const Config& config, Logger logger);
  ~DeviceCollectives();

  // Runs `bucket` over NCCL and returns true, or returns false (nothing done) when the bucket
  // is not for NCCL. Outputs and received splits are set on the handles; completing the
  // handles is the caller's. Errors of the transport propagate (as the host path's).
  bool run(const ResponseList& responses, const FusionBucket& bucket,
           std::vector<std::unique_ptr<TensorEntry>>& entries);

  // Aborts the NCCL communicator (ncclCommAbort), if any: a waiting op throws ShutDownError.
  void abort();

  // Buckets run over NCCL so far (tests, logs).
  size_t nccl_buckets() const { return nccl_buckets_; }

 private:
  enum class State { kUnknown, kReady, kStaging };
  bool eligible(const ResponseList& responses, const FusionBucket& bucket,
                const std::vector<std::unique_ptr<TensorEntry>>& entries) const;
  // Collective on the first eligible bucket (see the file comment); false: stage for good.
  bool ready(int device);
  void run_allreduce(const ResponseList& responses, const FusionBucket& bucket,
                     std::vector<std::unique_ptr<TensorEntry>>& entries);
  void run_other(const Response& r, TensorEntry& entry);
  std::byte* fusion_buffer(size_t bytes);

  Transport& transport_;
  std::string mode_;  // RUNRUN_GPU_OPERATIONS: auto, nccl, staging
  std::chrono::milliseconds collective_timeout_;
  // RUNRUN_HIERARCHICAL_ALLREDUCE or RUNRUN_AUTOTUNE: nccl_ is made hierarchical where the hosts
  // allow (make_hierarchical_device), switched per allreduce as the CPU backend's switch is.
  bool hierarchical_;
  bool hierarchical_configured_;  // RUNRUN_HIERARCHICAL_ALLREDUCE (when the CPU one has no switch)
  // RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=staging: the stage across hosts over transport_.data
  // (MPI/Gloo), staged through pinned host memory, instead of over NCCL.
  bool stage_across_hosts_;
  Logger logger_;
  State state_ = State::kUnknown;
  std::unique_ptr<DeviceBackend> nccl_;
  std::atomic<DeviceBackend*> published_{nullptr};  // nccl_, for abort() from any thread
  std::atomic<bool> aborted_{false};
  void* fusion_ = nullptr;  // device memory of nccl_'s device, fusion_bytes_ long
  size_t fusion_bytes_ = 0;
  std::atomic<size_t> nccl_buckets_{0};
};

}  // namespace runrun
