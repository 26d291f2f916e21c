#pragma once
// Why: the single-tensor cases: for each size, one collective through the runtime and the same
// collective through the raw side (bench_raw.h: MPI or gloo), on the same buffers, timed side
// by side. Every result is checked once against a locally computed value before timing.
// Thread-safety: the main thread only.

#include <string>

#include "tests/perf/bench_context.h"

namespace runrun::perf {

// `op`: allreduce (in place, sum), allgather, reducescatter (sum), alltoall (equal splits) or
// broadcast (in place, root 0). Sizes: options.sizes, or 4 B..256 MiB (allreduce) / 1 KiB..
// 64 MiB (the others) in powers of 4.
void run_collective_case(BenchContext& ctx, const std::string& op);

}  // namespace runrun::perf
