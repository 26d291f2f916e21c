#include <catch2/catch.hpp>

#include "rendezvous/elastic_keys.h"

using namespace runrun::rendezvous;

TEST_CASE("elastic assignments round-trip and malformed ones are refused") {
  const ElasticAssignment assignment{3, 1, 4, 2};
  CHECK(format_assignment(assignment) == "1 4 2");
  CHECK(parse_assignment(3, "1 4 2") == assignment);
  CHECK_FALSE(parse_assignment(3, "4 4 0").has_value());  // rank not below size
  CHECK_FALSE(parse_assignment(3, "1 4").has_value());
  CHECK_FALSE(parse_assignment(3, "1 4 2 9").has_value());
  CHECK_FALSE(parse_assignment(3, "-1 4 2").has_value());
  CHECK(elastic_failed_key(7) == "elastic/failed/7");
  CHECK(elastic_assignment_key("12") == "elastic/assign/12");
}
