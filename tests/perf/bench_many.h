#pragma once
// Why: the case the runtime exists for — many gradients per step. All tensors of a step are
// enqueued back to back (as a backward pass hands them over) and then waited for, against one
// raw allreduce (bench_raw.h) per tensor in the same order (what a framework without fusion does)
// and, for reference, one raw allreduce over all the bytes at once (the floor fusion aims at).
// Thread-safety: the main thread only.

#include "tests/perf/bench_context.h"

namespace runrun::perf {

// options.many_count tensors of options.many_bytes each ("allreduce.many"), and the same
// tensors as one grouped_allreduce call ("allreduce.many_grouped").
void run_many_small(BenchContext& ctx);

// ResNet-50's 161 gradients, enqueued in backward (reverse parameter) order
// ("allreduce.resnet50").
void run_resnet50(BenchContext& ctx);

}  // namespace runrun::perf
