#include "rendezvous/elastic_keys.h"

#include <sstream>

namespace runrun::rendezvous {

std::string format_assignment(const ElasticAssignment& assignment) {
  return std::to_string(assignment.rank) + " " + std::to_string(assignment.size) + " " +
         std::to_string(assignment.host_index);
}

std::optional<ElasticAssignment> parse_assignment(uint64_t generation, const std::string& text) {
  std::istringstream in(text);
  ElasticAssignment assignment;
  assignment.generation = generation;
  std::string rest;
  if (!(in >> assignment.rank >> assignment.size >> assignment.host_index) || (in >> rest)) {
    return std::nullopt;
  }
  if (assignment.rank < 0 || assignment.size <= assignment.rank || assignment.host_index < 0) {
    return std::nullopt;
  }
  return assignment;
}

}  // namespace runrun::rendezvous
