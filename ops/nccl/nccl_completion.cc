#include "ops/nccl/nccl_completion.h"

#include <algorithm>
#include <thread>

#include "common/errors.h"

namespace runrun::gpu {

NcclCompletion::NcclCompletion(std::shared_ptr<NcclComm> comm, cuda_abi::Stream stream,
                               std::string what, std::chrono::milliseconds collective_timeout)
    : comm_(std::move(comm)),
      done_(comm_->device()),
      what_(std::move(what)),
      started_(std::chrono::steady_clock::now()),
      collective_timeout_(collective_timeout) {
  done_.record(stream);
}

bool NcclCompletion::poll() {
  if (ended_) return true;
  comm_->throw_if_failed();
  const nccl_abi::Result async = comm_->async_error();
  if (async != nccl_abi::kSuccess && async != nccl_abi::kInProgress) {
    comm_->fail(std::make_exception_ptr(PeerFailureError(
        RUNRUN_WHERE, what_ + " on " + comm_->where() +
                          " failed: " + comm_->nccl().error_text(async) +
                          " (reported by ncclCommGetAsyncError: a peer or the network failed); "
                          "the communicator was aborted")));
  }
  if (done_.query()) {
    ended_ = true;
    return true;
  }
  if (collective_timeout_.count() > 0 &&
      std::chrono::steady_clock::now() - started_ > collective_timeout_) {
    comm_->fail(std::make_exception_ptr(TimeoutError(
        RUNRUN_WHERE,
        what_ + " on " + comm_->where() + " did not finish within the collective timeout of " +
            std::to_string(collective_timeout_.count()) +
            " ms (RUNRUN_COLLECTIVE_TIMEOUT): a peer is missing or stuck; the NCCL "
            "communicator was aborted (ncclCommAbort) so that nothing waits forever")));
  }
  return false;
}

bool NcclCompletion::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    if (poll()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace runrun::gpu
