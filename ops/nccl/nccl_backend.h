#pragma once
// Why: the NCCL data backend (issue 11 point 4; docs/gpu.md "The NCCL data backend"): Backend
// v2's collectives on CUDA memory over an NCCL communicator, enqueued on runrun's stream of the
// device (ops/cuda_streams.h) and completed by a CUDA event (nccl_completion.h). Negotiation
// never runs over it: it keeps a CPU control channel (MPI, Gloo, local) for the unique id of its
// communicator and of its subgroups' communicators. Scaling and averaging use NCCL's own
// operations (ncclAvg, ncclRedOpCreatePreMulSum); what NCCL cannot do without a kernel is
// refused by can_scale()/UnsupportedError and the core stages it instead.
// Uneven allgather: grouped ncclBroadcast, one per rank into its block of the output (no padding
// and no extra device memory; ncclAllGather when every block has the same size). Uneven
// reducescatter: grouped ncclReduce, one per block (ncclReduceScatter when even). Alltoall:
// grouped ncclSend/ncclRecv of bytes (the own block by a device copy).
// Threading contract: Backend's; abort() aborts the communicator from any thread.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ops/device_backend.h"
#include "ops/nccl/nccl_comm.h"

namespace runrun::gpu {

class NcclBackend final : public DeviceBackend {
 public:
  // Collective over `control`'s ranks (see make_nccl_backend).
  NcclBackend(std::unique_ptr<ControlChannel> control, const Topology& topology, int device,
              std::chrono::milliseconds timeout, Logger logger);
  ~NcclBackend() override;

  std::string_view name() const override { return "nccl"; }
  const Topology& topology() const override { return topology_; }
  int device() const override { return device_; }

  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override;
  CompletionPtr start_allgatherv(ConstDeviceBuffer in, size_t send_bytes, DeviceBuffer out,
                                 const std::vector<size_t>& recv_bytes) override;
  CompletionPtr start_broadcast(DeviceBuffer buffer, size_t bytes, int root) override;
  CompletionPtr start_alltoallv(ConstDeviceBuffer in, const std::vector<size_t>& send_bytes,
                                DeviceBuffer out, const std::vector<size_t>& recv_bytes) override;
  CompletionPtr start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                    const std::vector<size_t>& recv_counts, DataType type,
                                    ReduceOp op) override;
  CompletionPtr start_barrier() override;

  bool can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& scaling) const override;
  CompletionPtr start_allreduce_scaled(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                       DataType type, ReduceOp op,
                                       const DeviceReduceScaling& scaling) override;
  CompletionPtr start_reducescatter_scaled(ConstDeviceBuffer in, DeviceBuffer out,
                                           const std::vector<size_t>& recv_counts, DataType type,
                                           ReduceOp op,
                                           const DeviceReduceScaling& scaling) override;

  // A channel over the same ranks split from the kept CPU channel (NCCL carries no control).
  std::unique_ptr<ControlChannel> create_control_channel() override;
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override;

 protected:
  void abort_transport() override;

 private:
  // The reduce op of an allreduce/reducescatter (a pre-multiplied sum is created for the call
  // and destroyed after it was enqueued); throws UnsupportedError when NCCL cannot do it.
  struct Reduction;
  Reduction reduction(const char* collective, DataType type, ReduceOp op,
                      const DeviceReduceScaling& scaling);
  void check_device(const char* collective, DLDevice device) const;
  // Enqueued: the completion of what was just enqueued on the stream.
  CompletionPtr completion(const char* collective);

  std::unique_ptr<ControlChannel> control_;
  Topology topology_;
  int device_;
  std::chrono::milliseconds timeout_;
  Logger logger_;
  std::shared_ptr<NcclComm> comm_;
  void* scratch_ = nullptr;  // 4 bytes of device memory for the barrier
};

}  // namespace runrun::gpu
