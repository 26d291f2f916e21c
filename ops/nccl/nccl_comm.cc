#include "ops/nccl/nccl_comm.h"

#include "common/errors.h"
#include "ops/cuda_streams.h"

namespace runrun::gpu {

NcclComm::~NcclComm() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) return;
  DeviceGuard guard(device_);
  nccl_.comm_destroy(comm_);
}

std::string NcclComm::where() const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
         " (NCCL on cuda:" + std::to_string(device_) + ")";
}

void NcclComm::abort_locked() {
  if (aborted_) return;
  aborted_ = true;
  nccl_.comm_abort(comm_);
}

void NcclComm::check(nccl_abi::Result result, const char* call) {
  if (result == nccl_abi::kSuccess) return;
  fail(std::make_exception_ptr(InternalError(
      RUNRUN_WHERE, std::string(call) + " failed on " + where() + ": " + nccl_.error_text(result) +
                        "; the communicator was aborted (set "
                        "NCCL_DEBUG=INFO for NCCL's own account)")));
}

void NcclComm::throw_if_failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

void NcclComm::fail(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_) failure_ = std::move(error);
  abort_locked();
  std::rethrow_exception(failure_);
}

nccl_abi::Result NcclComm::async_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) return nccl_abi::kSuccess;  // freed: the failure is recorded already
  nccl_abi::Result error = nccl_abi::kSuccess;
  const nccl_abi::Result result = nccl_.comm_get_async_error(comm_, &error);
  return result != nccl_abi::kSuccess ? result : error;
}

void NcclComm::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_) {
    failure_ = std::make_exception_ptr(
        ShutDownError(RUNRUN_WHERE, "NCCL communicator of " + where() +
                                        " was aborted (the "
                                        "runtime shut down or a peer was lost)"));
  }
  abort_locked();
}

}  // namespace runrun::gpu
