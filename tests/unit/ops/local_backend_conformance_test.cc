// The backend conformance suite over LocalBackend with 2 and 4 thread-ranks, plus topology
// with pretended hosts and the local backend's mismatch detection.

#include <catch2/catch.hpp>

#include "tests/support/backend_conformance.h"
#include "tests/unit/ops/local_ranks.h"

using runrun::LocalBackend;
using runrun::LocalWorld;
using runrun::testing::run_ranks;

TEST_CASE("local backend passes the conformance suite with 2 ranks") {
  auto world = std::make_shared<LocalWorld>(2);
  run_ranks(world, [](LocalBackend& backend) { runrun::conformance::run_all(backend); });
}

TEST_CASE("local backend passes the conformance suite with 4 ranks") {
  auto world = std::make_shared<LocalWorld>(4);
  run_ranks(world, [](LocalBackend& backend) { runrun::conformance::run_all(backend); });
}

TEST_CASE("local backend passes the conformance suite with 1 rank") {
  auto world = std::make_shared<LocalWorld>(1);
  run_ranks(world, [](LocalBackend& backend) { runrun::conformance::run_all(backend); });
}

TEST_CASE("local topology: one host by default, pretended hosts with ranks_per_host") {
  auto single = std::make_shared<LocalWorld>(3);
  for (int r = 0; r < 3; ++r) {
    const auto t = single->topology_of(r);
    CHECK(t.local_rank == r);
    CHECK(t.local_size == 3);
    CHECK(t.cross_rank == 0);
    CHECK(t.cross_size == 1);
    CHECK(t.homogeneous);
  }
  runrun::LocalWorldOptions options;
  options.ranks_per_host = 2;
  auto hosts = std::make_shared<LocalWorld>(6, options);
  for (int r = 0; r < 6; ++r) {
    const auto t = hosts->topology_of(r);
    CHECK(t.rank == r);
    CHECK(t.size == 6);
    CHECK(t.local_rank == r % 2);
    CHECK(t.local_size == 2);
    CHECK(t.cross_rank == r / 2);
    CHECK(t.cross_size == 3);
    CHECK(t.homogeneous);
  }
  // Subgroup {1, 2, 3}: rank 1 alone on host 0, ranks 2 and 3 on host 1.
  std::vector<runrun::Topology> sub_topologies(3);
  run_ranks(hosts, [&](LocalBackend& backend) {
    auto sub = backend.create_subgroup({1, 2, 3});
    if (sub) sub_topologies[static_cast<size_t>(sub->rank())] = sub->topology();
  });
  const int expected_local[] = {0, 0, 1};
  const int expected_local_size[] = {1, 2, 2};
  const int expected_cross[] = {0, 1, 0};
  const int expected_cross_size[] = {2, 2, 1};
  for (size_t r = 0; r < 3; ++r) {
    INFO("subgroup rank " << r);
    CHECK(sub_topologies[r].size == 3);
    CHECK(sub_topologies[r].local_rank == expected_local[r]);
    CHECK(sub_topologies[r].local_size == expected_local_size[r]);
    CHECK(sub_topologies[r].cross_rank == expected_cross[r]);
    CHECK(sub_topologies[r].cross_size == expected_cross_size[r]);
    CHECK_FALSE(sub_topologies[r].homogeneous);  // one rank on host 0, two on host 1
  }
}

TEST_CASE("local backend: ranks calling different collectives all get MismatchError") {
  auto world = std::make_shared<LocalWorld>(2);
  const auto errors = runrun::testing::run_ranks_collect(world, [](LocalBackend& backend) {
    float value = 1;
    backend.allreduce(&value, &value, 1, runrun::DataType::kFloat32,
                      backend.rank() == 0 ? runrun::ReduceOp::kSum : runrun::ReduceOp::kMax);
  });
  for (const auto& error : errors) {
    REQUIRE(error);
    REQUIRE_THROWS_AS(std::rethrow_exception(error), runrun::MismatchError);
    REQUIRE_THROWS_WITH(
        std::rethrow_exception(error),
        Catch::Contains("allreduce float32 sum") && Catch::Contains("allreduce float32 max"));
  }
}
