#include "ops/algorithms/algorithm_choice.h"

#include <cstdlib>
#include <initializer_list>
#include <string>

#include "common/env_names.h"
#include "common/errors.h"

namespace runrun::algorithms {
namespace {

bool latency_bound(size_t bytes) { return bytes <= kLatencyBoundMaxBytes; }

// The algorithm of `algorithms` spelled `text` (kAuto, listed first, for empty or null).
template <typename Algorithm>
Algorithm parse(const char* variable, const char* collective, const char* text,
                std::initializer_list<Algorithm> algorithms) {
  if (text == nullptr || *text == '\0') return *algorithms.begin();
  std::string accepted;
  size_t i = 0;
  for (const Algorithm algorithm : algorithms) {
    if (std::string(text) == algorithm_name(algorithm)) return algorithm;
    const bool first = i == 0;
    const bool last = ++i == algorithms.size();
    accepted += first ? "" : last ? " or " : ", ";
    accepted += algorithm_name(algorithm);
    if (first) accepted += " (the default)";
  }
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(variable) + "='" + text + "' is not " +
                                               collective + " algorithm: use " + accepted);
}

}  // namespace

AllreduceAlgorithm choose_allreduce(size_t bytes, int ranks) {
  if (ranks <= kDirectMaxRanks) return AllreduceAlgorithm::kDirect;
  return latency_bound(bytes) ? AllreduceAlgorithm::kRecursiveDoubling
                              : AllreduceAlgorithm::kHalvingDoubling;
}

AllgatherAlgorithm choose_allgather(size_t bytes, int ranks) {
  if (ranks <= kDirectMaxRanks) return AllgatherAlgorithm::kDirect;
  return latency_bound(bytes) ? AllgatherAlgorithm::kBruck : AllgatherAlgorithm::kRing;
}

BroadcastAlgorithm choose_broadcast(size_t bytes, int ranks) {
  if (ranks <= kDirectMaxRanks) return BroadcastAlgorithm::kDirect;
  return latency_bound(bytes) ? BroadcastAlgorithm::kBinomialTree
                              : BroadcastAlgorithm::kScatterAllgather;
}

ReducescatterAlgorithm choose_reducescatter(size_t bytes, int ranks) {
  if (ranks <= kDirectMaxRanks) return ReducescatterAlgorithm::kDirect;
  return latency_bound(bytes) ? ReducescatterAlgorithm::kRecursiveDoubling
                              : ReducescatterAlgorithm::kRing;
}

const char* algorithm_name(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::kAuto:
      return "auto";
    case AllreduceAlgorithm::kDirect:
      return "direct";
    case AllreduceAlgorithm::kRecursiveDoubling:
      return "recursive_doubling";
    case AllreduceAlgorithm::kHalvingDoubling:
      return "halving_doubling";
  }
  return "auto";
}

const char* algorithm_name(AllgatherAlgorithm algorithm) {
  switch (algorithm) {
    case AllgatherAlgorithm::kAuto:
      return "auto";
    case AllgatherAlgorithm::kDirect:
      return "direct";
    case AllgatherAlgorithm::kBruck:
      return "bruck";
    case AllgatherAlgorithm::kRing:
      return "ring";
  }
  return "auto";
}

const char* algorithm_name(BroadcastAlgorithm algorithm) {
  switch (algorithm) {
    case BroadcastAlgorithm::kAuto:
      return "auto";
    case BroadcastAlgorithm::kDirect:
      return "direct";
    case BroadcastAlgorithm::kBinomialTree:
      return "binomial_tree";
    case BroadcastAlgorithm::kScatterAllgather:
      return "scatter_allgather";
  }
  return "auto";
}

const char* algorithm_name(ReducescatterAlgorithm algorithm) {
  switch (algorithm) {
    case ReducescatterAlgorithm::kAuto:
      return "auto";
    case ReducescatterAlgorithm::kDirect:
      return "direct";
    case ReducescatterAlgorithm::kRecursiveDoubling:
      return "recursive_doubling";
    case ReducescatterAlgorithm::kRing:
      return "ring";
  }
  return "auto";
}

AllreduceAlgorithm parse_allreduce_algorithm(const char* text) {
  using A = AllreduceAlgorithm;
  return parse(env::kGlooAllreduce, "an allreduce", text,
               {A::kAuto, A::kDirect, A::kRecursiveDoubling, A::kHalvingDoubling});
}

AllgatherAlgorithm parse_allgather_algorithm(const char* text) {
  using A = AllgatherAlgorithm;
  return parse(env::kGlooAllgather, "an allgather", text,
               {A::kAuto, A::kDirect, A::kBruck, A::kRing});
}

BroadcastAlgorithm parse_broadcast_algorithm(const char* text) {
  using A = BroadcastAlgorithm;
  return parse(env::kGlooBroadcast, "a broadcast", text,
               {A::kAuto, A::kDirect, A::kBinomialTree, A::kScatterAllgather});
}

ReducescatterAlgorithm parse_reducescatter_algorithm(const char* text) {
  using A = ReducescatterAlgorithm;
  return parse(env::kGlooReducescatter, "a reducescatter", text,
               {A::kAuto, A::kDirect, A::kRecursiveDoubling, A::kRing});
}

CollectiveAlgorithms collective_algorithms_from_environment() {
  CollectiveAlgorithms algorithms;
  algorithms.allreduce = parse_allreduce_algorithm(std::getenv(env::kGlooAllreduce));
  algorithms.allgather = parse_allgather_algorithm(std::getenv(env::kGlooAllgather));
  algorithms.broadcast = parse_broadcast_algorithm(std::getenv(env::kGlooBroadcast));
  algorithms.reducescatter = parse_reducescatter_algorithm(std::getenv(env::kGlooReducescatter));
  return algorithms;
}

}  // namespace runrun::algorithms
