#pragma once
// Why: the GPU side of runrun_bench (issue 11 point 7): allreduce, broadcast and allgather of
// CUDA buffers through the runtime (over NCCL where found, else staged) against raw NCCL calls on
// the same buffers, with nccl-tests' algbw/busbw (the reporter's columns). The raw side is a
// communicator of its own from the libnccl runrun loads (ops/nccl/nccl_library.h), its unique id
// broadcast over the raw CPU side. Cases cuda_allreduce, cuda_broadcast, cuda_allgather; rows
// "<op>.cuda". Without a GPU it runs only against the fakes of tests/unit/gpu (perf.smoke_cuda).
// Thread-safety: the main thread only.

#include <string>

#include "tests/perf/bench_context.h"

namespace runrun::perf {

void run_gpu_case(BenchContext& ctx, const std::string& name);

}  // namespace runrun::perf
