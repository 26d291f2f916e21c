#pragma once
// Why: one NCCL communicator shared by the backend and the completions of its operations, so
// that whichever notices a failure (a completion polling ncclCommGetAsyncError or passing the
// collective timeout, Backend::abort() from the peer monitor's thread) aborts it once with
// ncclCommAbort — which makes NCCL's kernels and proxy threads give up instead of waiting for a
// dead peer — and every later call throws the same error.
// Threading contract: fail() and abort() from any thread; the rest on the driving thread.

#include <exception>
#include <mutex>
#include <string>

#include "ops/nccl/nccl_library.h"

namespace runrun::gpu {

class NcclComm {
 public:
  NcclComm(const NcclLibrary& nccl, nccl_abi::Comm comm, int rank, int size, int device)
      : nccl_(nccl), comm_(comm), rank_(rank), size_(size), device_(device) {}
  // ncclCommDestroy, or nothing more after an abort (ncclCommAbort freed it).
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  const NcclLibrary& nccl() const { return nccl_; }
  nccl_abi::Comm get() const { return comm_; }
  int device() const { return device_; }
  // "rank 1 of 2 (NCCL on cuda:1)", for messages.
  std::string where() const;

  // Throws NCCL's error as InternalError naming `call` unless `result` is success; the
  // communicator is aborted first (its state is unknown after a failed call).
  void check(nccl_abi::Result result, const char* call);
  // Throws the recorded failure, if any (every call after a failure throws it again).
  void throw_if_failed() const;
  // Records `error` (the first one wins), aborts the communicator, throws the recorded one.
  [[noreturn]] void fail(std::exception_ptr error);
  // An asynchronous NCCL error (ncclCommGetAsyncError), or success.
  nccl_abi::Result async_error() const;
  // Backend::abort(): ncclCommAbort once, later calls throw ShutDownError.
  void abort();

 private:
  void abort_locked();

  const NcclLibrary& nccl_;
  nccl_abi::Comm comm_;
  int rank_, size_, device_;
  mutable std::mutex mutex_;
  std::exception_ptr failure_;
  bool aborted_ = false;
};

}  // namespace runrun::gpu
