#pragma once
// Why: backends that move host memory and finish each collective on the calling thread (local,
// gloo) implement every start_* the same way: refuse a buffer that is not in CPU memory
// (UnsupportedError naming the device and the op), run the blocking body, and hand back an
// already completed (or already failed) Completion. This base does that once; such a backend
// implements the run_* bodies on host pointers.
// Threading contract: as Backend's; run_* run on the driving thread inside start_*.

#include <cstddef>
#include <vector>

#include "ops/backend.h"

namespace runrun {

class HostSynchronousBackend : public Backend {
 public:
  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) final;
  CompletionPtr start_allgatherv(ConstDeviceBuffer in, size_t send_bytes, DeviceBuffer out,
                                 const std::vector<size_t>& recv_bytes) final;
  CompletionPtr start_broadcast(DeviceBuffer buffer, size_t bytes, int root) final;
  CompletionPtr start_alltoallv(ConstDeviceBuffer in, const std::vector<size_t>& send_bytes,
                                DeviceBuffer out, const std::vector<size_t>& recv_bytes) final;
  CompletionPtr start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                    const std::vector<size_t>& recv_counts, DataType type,
                                    ReduceOp op) final;
  CompletionPtr start_barrier() final;

 protected:
  // The collectives of Backend's blocking contract, on host memory; they throw what the
  // completion then carries.
  virtual void run_allreduce(const void* in, void* out, size_t count, DataType type,
                             ReduceOp op) = 0;
  virtual void run_allgatherv(const void* in, size_t send_bytes, void* out,
                              const std::vector<size_t>& recv_bytes) = 0;
  virtual void run_broadcast(void* buffer, size_t bytes, int root) = 0;
  virtual void run_alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                             const std::vector<size_t>& recv_bytes) = 0;
  virtual void run_reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                                 DataType type, ReduceOp op) = 0;
  virtual void run_barrier() = 0;
};

}  // namespace runrun
