#pragma once
// Why: the one place that decides how a measurement is taken, so every case (runtime and raw
// MPI or gloo alike) is timed the same way:
//   - warm-up blocks first (first sight of a tensor goes through the coordinator, first touch
//     of pages, connection setup);
//   - every timed block starts after a barrier of the raw side (bench_raw.h) and runs `batch`
//     back-to-back calls of one side; its time per call is the slowest rank's (a max over ranks
//     after the block, outside timing; with shared_clock, from the last rank's start to the
//     last rank's end);
//   - the sides alternate block by block (rotating which goes first), so noise from other
//     processes on the machine hits every side alike;
//   - timing stops after `iters` blocks, or earlier once the blocks took `budget_s` in total
//     (at least kMinIters each). Every rank sees the same MAX times, so every rank makes the
//     same decision and the collectives stay matched.
// Thread-safety: call from the thread that drives the raw side (the main thread).

#include <functional>
#include <vector>

#include "tests/perf/bench_raw.h"

namespace runrun::perf {

struct TimingPlan {
  int warmup = 3;
  int iters = 20;
  int batch = 1;        // calls per timed block
  double budget_s = 2;  // all sides together
  // Every rank reads one clock (one host, or network-namespace hosts on one kernel): a block
  // counts from the last rank's barrier exit to the last rank's end, so the barrier's exit skew
  // (large for gloo's TCP barrier under load) is not counted as the op's time.
  bool shared_clock = false;
};

inline constexpr int kMinIters = 5;

struct Summary {
  double median_us = 0;
  double min_us = 0;
  size_t samples = 0;
};

using Side = std::function<void()>;

// Returns, per side, the summary of its per-call times in microseconds.
std::vector<Summary> time_sides(const TimingPlan& plan, RawComm& comm,
                                const std::vector<Side>& sides);

// Median and minimum of `us` (empty: zeros).
Summary summarize(std::vector<double> us);

// Calls per timed block for an op of `bytes`: many for tiny ops (so a block is long against the
// clock's and the barrier's jitter), one from 1 MiB up.
int batch_for(size_t bytes);

}  // namespace runrun::perf
