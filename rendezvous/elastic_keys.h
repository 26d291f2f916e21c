#pragma once
// Why: elastic training (docs/elastic.md) is a conversation between the launcher's elastic
// driver and the ranks through the job's rendezvous store; its keys and the assignment record
// are named once here so the two sides cannot drift apart.
//   control generation (0):  "elastic/generation"   the latest generation G the driver published
//                            "elastic/failed/<g>"   counter: ranks that failed in generation g
//                                                   and ask for a new one
//   generation G (>= 1):     "elastic/assign/<worker id>"  "rank size host_index" of that worker
//                            "elastic/joined/<worker id>"  set by the worker once it took its
//                                                          assignment (a member that never does
//                                                          is stopped after --elastic-timeout)
// The driver writes every assignment of G before it sets "elastic/generation" to G, so a rank
// that reads G finds its assignment there (or learns that it is no longer part of the job).
// Thread-safety: pure functions and constants.

#include <cstdint>
#include <optional>
#include <string>

namespace runrun::rendezvous {

inline constexpr uint64_t kElasticControlGeneration = 0;
inline constexpr const char* kElasticGenerationKey = "elastic/generation";

inline std::string elastic_failed_key(uint64_t generation) {
  return "elastic/failed/" + std::to_string(generation);
}
inline std::string elastic_assignment_key(const std::string& worker) {
  return "elastic/assign/" + worker;
}
inline std::string elastic_joined_key(const std::string& worker) {
  return "elastic/joined/" + worker;
}

// Where one worker runs in one generation.
struct ElasticAssignment {
  uint64_t generation = 0;
  int rank = 0;
  int size = 0;
  int host_index = 0;  // the driver's index of the worker's host (stable across generations)

  bool operator==(const ElasticAssignment&) const = default;
};

// "rank size host_index" <-> the assignment (generation not included: it is the key's).
std::string format_assignment(const ElasticAssignment& assignment);
std::optional<ElasticAssignment> parse_assignment(uint64_t generation, const std::string& text);

}  // namespace runrun::rendezvous
