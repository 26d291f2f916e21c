#include "ops/algorithms/allreduce_choice.h"

#include <cstdlib>
#include <string>

#include "common/env_names.h"
#include "common/errors.h"

namespace runrun::algorithms {

AllreduceAlgorithm choose_allreduce(size_t bytes, int ranks) {
  if (ranks <= kDirectMaxRanks) return AllreduceAlgorithm::kDirect;
  return bytes <= kRecursiveDoublingMaxBytes ? AllreduceAlgorithm::kRecursiveDoubling
                                             : AllreduceAlgorithm::kHalvingDoubling;
}

const char* allreduce_algorithm_name(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::kAuto: return "auto";
    case AllreduceAlgorithm::kDirect: return "direct";
    case AllreduceAlgorithm::kRecursiveDoubling: return "recursive_doubling";
    case AllreduceAlgorithm::kHalvingDoubling: return "halving_doubling";
  }
  return "auto";
}

AllreduceAlgorithm parse_allreduce_algorithm(const char* text) {
  if (text == nullptr || *text == '\0') return AllreduceAlgorithm::kAuto;
  for (const auto algorithm : {AllreduceAlgorithm::kAuto, AllreduceAlgorithm::kDirect,
                               AllreduceAlgorithm::kRecursiveDoubling,
                               AllreduceAlgorithm::kHalvingDoubling}) {
    if (std::string(text) == allreduce_algorithm_name(algorithm)) return algorithm;
  }
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(env::kGlooAllreduce) + "='" + text +
                                               "' is not an allreduce algorithm: use auto (the "
                                               "default), direct, recursive_doubling or "
                                               "halving_doubling");
}

AllreduceAlgorithm allreduce_algorithm_from_environment() {
  return parse_allreduce_algorithm(std::getenv(env::kGlooAllreduce));
}

}  // namespace runrun::algorithms
