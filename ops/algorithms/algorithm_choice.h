#pragma once
// Why: which algorithm moves each collective between hosts, by its size and the number of
// ranks: one rule, so the Gloo backend, its tests and the cost model (docs/scaling.md) agree.
// RUNRUN_GLOO_ALLREDUCE, _ALLGATHER, _BROADCAST and _REDUCESCATTER force one (benchmarks
// measure the crossovers with them, and the conformance suite runs each).
// Thread-safety: pure functions (the *_from_environment ones read the environment).

#include <cstddef>

namespace runrun::algorithms {

enum class AllreduceAlgorithm {
  kAuto,               // choose_allreduce below
  kDirect,             // every rank to every other: 1 step (small) or 2 (reduce-scatter, allgather)
  kRecursiveDoubling,  // recursive_doubling.h
  kHalvingDoubling,    // halving_doubling.h
};

enum class AllgatherAlgorithm {
  kAuto,
  kDirect,  // every block straight to every other rank: 1 step, N-1 messages per rank
  kBruck,   // allgather.h: ceil(log2 N) steps
  kRing,    // allgather.h: N-1 steps of one block
};

enum class BroadcastAlgorithm {
  kAuto,
  kDirect,            // the root sends N-1 copies
  kBinomialTree,      // broadcast.h: ceil(log2 N) steps of the whole buffer
  kScatterAllgather,  // broadcast.h: the tree scatters 1/N per rank, a ring gathers it
};

enum class ReducescatterAlgorithm {
  kAuto,
  kDirect,             // every block straight to its rank: 1 step, N-1 messages per rank
  kRecursiveDoubling,  // reducescatter.h: an allreduce of the whole buffer, ceil(log2 N) steps
  kRing,               // reducescatter.h: N-1 steps of one block
};

// Up to this many ranks the direct exchanges are kept at every size: one step (or two) where the
// others take log2 N (or N-1), with the same bytes per rank (a broadcast's root excepted); at 4
// ranks the direct and recursive-doubling negotiation rounds measured alike on one host
// (docs/scaling.md).
inline constexpr int kDirectMaxRanks = 4;
// Beyond it, collectives of up to this many bytes (the whole buffer: an allreduce's or a
// broadcast's, every rank's blocks of an allgather or reducescatter together) take the
// latency-bound algorithm (log2 N messages), larger ones the bandwidth-optimal one.
inline constexpr size_t kLatencyBoundMaxBytes = size_t{64} << 10;

// What kAuto runs for `bytes` over `ranks` ranks (never kAuto).
AllreduceAlgorithm choose_allreduce(size_t bytes, int ranks);
AllgatherAlgorithm choose_allgather(size_t bytes, int ranks);
BroadcastAlgorithm choose_broadcast(size_t bytes, int ranks);
ReducescatterAlgorithm choose_reducescatter(size_t bytes, int ranks);

// Each algorithm's spelling in its variable, and back. A parse throws InvalidArgumentError
// naming the variable and the accepted values for any other text; empty or null is kAuto.
const char* algorithm_name(AllreduceAlgorithm algorithm);
const char* algorithm_name(AllgatherAlgorithm algorithm);
const char* algorithm_name(BroadcastAlgorithm algorithm);
const char* algorithm_name(ReducescatterAlgorithm algorithm);
AllreduceAlgorithm parse_allreduce_algorithm(const char* text);
AllgatherAlgorithm parse_allgather_algorithm(const char* text);
BroadcastAlgorithm parse_broadcast_algorithm(const char* text);
ReducescatterAlgorithm parse_reducescatter_algorithm(const char* text);

// One choice per collective, kAuto unless forced.
struct CollectiveAlgorithms {
  AllreduceAlgorithm allreduce = AllreduceAlgorithm::kAuto;
  AllgatherAlgorithm allgather = AllgatherAlgorithm::kAuto;
  BroadcastAlgorithm broadcast = BroadcastAlgorithm::kAuto;
  ReducescatterAlgorithm reducescatter = ReducescatterAlgorithm::kAuto;
};

// Reads RUNRUN_GLOO_ALLREDUCE, _ALLGATHER, _BROADCAST and _REDUCESCATTER.
CollectiveAlgorithms collective_algorithms_from_environment();

}  // namespace runrun::algorithms
