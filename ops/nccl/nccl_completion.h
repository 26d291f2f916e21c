#pragma once
// Why: an NCCL operation ends when the work it enqueued on runrun's stream ran; its Completion
// is a CUDA event recorded after it (ops/completion.h). NCCL reports a failure (a peer's
// network connection lost, a remote error) only through ncclCommGetAsyncError, and a peer that
// died leaves the kernel waiting forever, so waiting polls both the event and the
// communicator's error, with a growing pause (never spinning a core), and passing the
// collective timeout aborts the communicator (ncclCommAbort) so nothing hangs.
// Threading contract: as Completion's; the communicator may be aborted from any thread.

#include <chrono>
#include <memory>
#include <string>

#include "ops/completion.h"
#include "ops/cuda_streams.h"
#include "ops/nccl/nccl_comm.h"

namespace runrun::gpu {

class NcclCompletion final : public Completion {
 public:
  // Records the event on `stream` now (after the operation `what` was enqueued there).
  NcclCompletion(std::shared_ptr<NcclComm> comm, cuda_abi::Stream stream, std::string what,
                 std::chrono::milliseconds collective_timeout);

  bool poll() override;
  bool wait_for(std::chrono::milliseconds timeout) override;

 private:
  std::shared_ptr<NcclComm> comm_;
  CudaEvent done_;
  std::string what_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::milliseconds collective_timeout_;
  bool ended_ = false;
};

}  // namespace runrun::gpu
