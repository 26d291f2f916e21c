#pragma once
// Why: the data backend of CUDA tensors (issue 11 point 4): collectives on device memory on
// runrun's stream of the device, completed by a CUDA event. A Backend (ops/backend.h) plus what
// the core needs beyond it: an allreduce that scales without kernels of runrun's own (NCCL's
// average and pre-multiplied sum), and the question whether it can. A top-level ops header (as
// cuda_streams.h), so the core's device path (core/execution/device_collectives.h) makes and
// drives one
// without including a backend folder; the NCCL implementation is ops/nccl/nccl_backend.h.
// Threading contract: as Backend's (one driving thread; abort() from any thread).

#include <chrono>
#include <memory>
#include <string>

#include "common/logging.h"
#include "ops/backend.h"

namespace runrun {

// What an allreduce multiplies in: out = factor * reduce(in) (op sum), where the core folds
// prescale, postscale and an average's 1/divisor into one factor; `average` asks for the
// backend's own average instead (factor 1 then), so integers divide as the backend does.
struct DeviceReduceScaling {
  double factor = 1.0;
  bool average = false;
};

class DeviceBackend : public Backend {
 public:
  // Whether start_allreduce_scaled (and a scaled reducescatter) can do `scaling` for `type` and
  // `op` (e.g. a fractional factor of an integer type cannot be applied without a kernel). The
  // answer depends on its arguments only, so every rank gives the same one.
  virtual bool can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& scaling) const = 0;
  virtual CompletionPtr start_allreduce_scaled(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                               DataType type, ReduceOp op,
                                               const DeviceReduceScaling& scaling) = 0;
  virtual CompletionPtr start_reducescatter_scaled(ConstDeviceBuffer in, DeviceBuffer out,
                                                   const std::vector<size_t>& recv_counts,
                                                   DataType type, ReduceOp op,
                                                   const DeviceReduceScaling& scaling) = 0;
  // The CUDA device this rank's communicator drives.
  virtual int device() const = 0;
};

// Whether the NCCL backend's can_scale() would say yes: for deciding before a communicator
// exists (the core's per-bucket choice between NCCL and staging).
bool nccl_can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& scaling);

// "" when this process can make an NCCL backend (a CUDA runtime with a GPU and NCCL 2.11+ were
// found), else why not (the library search's words). Cheap after the first call.
std::string nccl_unusable_reason();

// Collective over the ranks of `control`: an NCCL communicator of those ranks on cuda:`device`,
// its unique id made by rank 0 and broadcast over `control` (negotiation stays on the CPU
// channel, which the backend keeps for subgroups). Every rank must have checked
// nccl_unusable_reason() and agreed that all can (the caller's job: a rank that cannot would
// leave the others waiting in ncclCommInitRank). `timeout`: the collective timeout (0: none),
// after which a waiting completion aborts the communicator and throws TimeoutError.
// `topology`: this rank's place in those ranks (rank, size).
std::unique_ptr<DeviceBackend> make_nccl_backend(std::unique_ptr<ControlChannel> control,
                                                 const Topology& topology, int device,
                                                 std::chrono::milliseconds timeout, Logger logger);

// Hierarchical allreduce of CUDA tensors (RUNRUN_HIERARCHICAL_ALLREDUCE; the implementation is
// ops/hierarchical/hierarchical_device_backend.h). Collective over every rank of `flat` (its
// control channel carries the topologies): a backend whose allreduce is a reduce-scatter inside
// each host, an allreduce across hosts and an allgather inside, over subgroups of `flat`, when
// `topology` (this rank's cross_rank, local_size, cross_size) makes a full grid of at least two
// hosts with at least two ranks each; otherwise `flat` unchanged with *why_not set (every rank
// decides alike). `staged_cross` (RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=staging): a host-memory
// backend (MPI, Gloo) over the same ranks, numbered alike; the stage across hosts then runs over
// subgroups of it, staged through pinned host memory, instead of over NCCL (collective over it
// too; the returned backend owns those subgroups and must be destroyed before `staged_cross`).
std::unique_ptr<DeviceBackend> make_hierarchical_device(std::unique_ptr<DeviceBackend> flat,
                                                        const Topology& topology,
                                                        std::string* why_not,
                                                        Backend* staged_cross = nullptr);

}  // namespace runrun
