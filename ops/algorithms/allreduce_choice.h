#pragma once
// Why: which allreduce algorithm moves a buffer between hosts, by its size and the number of
// ranks: one rule, so the Gloo backend, its tests and the cost model (docs/scaling.md) agree.
// RUNRUN_GLOO_ALLREDUCE forces one (benchmarks, and the conformance suite runs each).
// Thread-safety: pure functions.

#include <cstddef>
#include <string>

namespace runrun::algorithms {

enum class AllreduceAlgorithm {
  kAuto,               // choose_allreduce below
  kDirect,             // every rank to every other: 1 step (small) or 2 (reduce-scatter, allgather)
  kRecursiveDoubling,  // recursive_doubling.h
  kHalvingDoubling,    // halving_doubling.h
};

// Up to this many ranks the direct exchange is kept at every size: one step (or two) where the
// others take log2 N (or 2 log2 N), with the same bytes per rank; at 4 ranks the direct and
// recursive-doubling negotiation rounds measured alike on one host (docs/scaling.md).
inline constexpr int kDirectMaxRanks = 4;
// Beyond it, buffers up to this size go by recursive doubling (latency-bound: log2 N messages
// of the whole buffer), larger ones by halving-doubling (bandwidth-optimal).
inline constexpr size_t kRecursiveDoublingMaxBytes = size_t{64} << 10;

// What kAuto runs for an allreduce of `bytes` over `ranks` ranks (never kAuto).
AllreduceAlgorithm choose_allreduce(size_t bytes, int ranks);

// RUNRUN_GLOO_ALLREDUCE's spelling of each algorithm, and back. Throws InvalidArgumentError
// naming the variable and the accepted values for any other text; empty or null is kAuto.
const char* allreduce_algorithm_name(AllreduceAlgorithm algorithm);
AllreduceAlgorithm parse_allreduce_algorithm(const char* text);
AllreduceAlgorithm allreduce_algorithm_from_environment();

}  // namespace runrun::algorithms
