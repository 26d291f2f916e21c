#pragma once
// Why: one conformance suite, written once, that every Backend must pass (the local backend in
// unit tests with N thread-ranks, the process backends under mpirun). Every check fills
// per-rank deterministic inputs (small integers, so sums and products are exact even in
// float16/bfloat16), runs one collective, and compares the bytes exactly against a reference
// computed locally from what every rank must have sent.
//
// Threading contract: every rank of the backend's group calls the same functions in the same
// order with the same options (they are collective). A failed comparison throws
// ConformanceFailure naming rank, op, dtype, size and the first differing index; the caller
// must then make sure the other ranks do not wait forever (LocalWorld::fail_rank, MPI_Abort).

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backend.h"

namespace runrun::conformance {

class ConformanceFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  // Element counts every op × dtype × op-kind runs with.
  std::vector<size_t> sizes{0, 1, 7, 65539};
  // One extra float32 sum allreduce of this many elements (0: skip).
  size_t large_count = 1048579;
  // Whether to create subgroups and run the suite (small sizes) inside them.
  bool subgroups = true;
  // The reductions the backend offers (empty: all); for the others, allreduce and reducescatter
  // must throw UnsupportedError before anything is sent (the NCCL backend has no int16 and no
  // sum of bools: the core stages those).
  std::function<bool(DataType, ReduceOp)> reduces;
};

// Every check below, in order.
void run_all(Backend& backend, const Options& options = {});

void check_topology(Backend& backend);
void check_allreduce(Backend& backend, const Options& options);
void check_allgatherv(Backend& backend, const Options& options);
void check_broadcast(Backend& backend, const Options& options);
void check_alltoallv(Backend& backend, const Options& options);
void check_reducescatter(Backend& backend, const Options& options);
// Adasum (ops/adasum/adasum_allreduce.h) over the backend: every floating-point dtype, fused
// buffers of uneven tensors; UnsupportedError for a size that is not a power of two.
void check_adasum(Backend& backend, const Options& options);
void check_barrier(Backend& backend);
void check_control_channel(Backend& backend);
void check_subgroups(Backend& backend, const Options& options = {});

}  // namespace runrun::conformance
