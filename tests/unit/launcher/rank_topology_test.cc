#include <catch2/catch.hpp>

#include "common/errors.h"
#include "launcher/hosts/rank_topology.h"

using namespace runrun::launcher;

TEST_CASE("even layout: local rank within the host, cross rank = host index") {
  const std::vector<int> layout = {2, 2};
  //                                     rank size lr ls cr cs host
  CHECK(topology_of_rank(0, layout) == RankTopology{0, 4, 0, 2, 0, 2, 0});
  CHECK(topology_of_rank(1, layout) == RankTopology{1, 4, 1, 2, 0, 2, 0});
  CHECK(topology_of_rank(2, layout) == RankTopology{2, 4, 0, 2, 1, 2, 1});
  CHECK(topology_of_rank(3, layout) == RankTopology{3, 4, 1, 2, 1, 2, 1});
}

TEST_CASE("uneven layout: cross groups hold the hosts that have that local rank") {
  const std::vector<int> layout = {2, 1, 1};
  CHECK(topology_of_rank(0, layout) == RankTopology{0, 4, 0, 2, 0, 3, 0});
  CHECK(topology_of_rank(1, layout) == RankTopology{1, 4, 1, 2, 0, 1, 0});
  CHECK(topology_of_rank(2, layout) == RankTopology{2, 4, 0, 1, 1, 3, 1});
  CHECK(topology_of_rank(3, layout) == RankTopology{3, 4, 0, 1, 2, 3, 2});
}

TEST_CASE("layout text round trip and errors") {
  CHECK(parse_layout("4,2,1") == std::vector<int>{4, 2, 1});
  CHECK(format_layout({4, 2, 1}) == "4,2,1");
  CHECK_THROWS_AS(parse_layout("4,,1"), runrun::InvalidArgumentError);
  CHECK_THROWS_AS(parse_layout("0"), runrun::InvalidArgumentError);
  CHECK_THROWS_AS(parse_layout("x"), runrun::InvalidArgumentError);
}
