#pragma once
// Why: the measurements behind `runrun --check-network`, over the same Backend (gloo or MPI)
// and transport a job uses: latency and bandwidth between the two processes of a pair, and
// allreduce across every host. Iteration counts are chosen by the group's rank 0 from a first
// timing and broadcast, so every rank runs the same sequence of collectives; sizes grow until a
// transfer takes long enough to measure, so a slow link (Mbit/s) and a fast one (tens of
// Gbit/s) both take about `budget_s`. Each is timed in three blocks and the best block counts
// (load on a host slows a block down; nothing makes one faster than the link).
// Thread-safety: collective over the backend's ranks; the backend's driving thread only.

#include <cstddef>
#include <vector>

#include "ops/backend.h"
#include "tools/check_network/network_report.h"

namespace runrun::check_network {

// `pair` is a backend over exactly the two processes. Returns the latency and both directions'
// bandwidth (a = the pair's rank 0, b = its rank 1; the caller fills in the host indices).
// The same result on both ranks.
PairResult probe_pair(Backend& pair, double budget_s);

// Allreduce (float32 sum) across every rank of `all` for each size, `budget_s` per size.
std::vector<AllreduceResult> probe_allreduce(Backend& all, const std::vector<std::size_t>& sizes,
                                             double budget_s);

}  // namespace runrun::check_network
