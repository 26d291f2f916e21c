// runrun --profile's slowest rank (core/negotiation/rank_lateness.h): the per-rank aggregation of
// lateness
// from given ages (exact), and a runtime whose rank k enqueues each allreduce late: rank 0
// names rank k, also when k is rank 0 itself (the coordinator cannot see its own lateness from
// when the others' bits arrive, only from the ranks' ages). The only time bound is "late by more
// than half of the injected sleep", which a sleep guarantees.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "core/negotiation/rank_lateness.h"
#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using namespace std::chrono_literals;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;
using runrun::testing::view_of;

TEST_CASE("rank lateness: the largest age is the earliest arrival, the others late by the gap",
          "[profile]") {
  RankLatenessStats stats(3, 1024);
  // Tensor 0: rank 2 late by 0.5 s, rank 1 by 0.25. Tensor 1: rank 2 late by 0.5, rank 0 had no
  // entry (joined). Tensor 2: nobody had one: skipped.
  // ages_s is rank-major: ages_s[rank][tensor].
  stats.add({{1.0F, -1.0F, -1.0F}, {0.75F, 5.0F, -1.0F}, {0.5F, 4.5F, -1.0F}});
  std::vector<RankLatenessStats::PerRank> ranks = stats.snapshot();
  REQUIRE(ranks.size() == 3);
  CHECK(ranks[0].samples == 1);
  CHECK(ranks[0].median_s == Approx(0));
  CHECK(ranks[1].samples == 2);
  CHECK(ranks[1].median_s == Approx(0.125));  // 0.25 and 0
  CHECK(ranks[1].mean_s == Approx(0.125));
  CHECK(ranks[2].samples == 2);
  CHECK(ranks[2].median_s == Approx(0.5));
  // A malformed gather (lengths differ) adds nothing.
  stats.add({{1.0F}, {1.0F, 2.0F}, {1.0F}});
  CHECK(stats.snapshot()[0].samples == 1);
}

TEST_CASE("rank lateness: median and mean over the last `window` samples only", "[profile]") {
  RankLatenessStats stats(2, 4);
  for (float late : {9.0F, 9.0F, 9.0F, 9.0F, 1.0F, 2.0F, 3.0F}) stats.add({{late}, {0.0F}});
  // Rank 1 (age 0) is late by `late`; the window holds 9, 1, 2, 3.
  RankLatenessStats::PerRank rank1 = stats.snapshot()[1];
  CHECK(rank1.samples == 7);
  CHECK(rank1.median_s == Approx(2.5));
  CHECK(rank1.mean_s == Approx(15.0 / 4));
  CHECK(stats.snapshot()[0].median_s == Approx(0));
}

TEST_CASE("rank lateness: a runtime under RUNRUN_PROFILE names the rank that enqueues late",
          "[profile]") {
  constexpr auto kLate = 30ms;
  // Rank 0 gathers the ages after rounds 1, 3, 7, 15, ... (rounds with agreed work): one
  // allreduce per round, so at least 15 samples per rank after 17 steps.
  constexpr int kSteps = 17;
  for (int late_rank : {0, 1}) {
    INFO("late rank " << late_rank);
    std::vector<RankLatenessStats::PerRank> seen;
    run_ranks(
        2,
        [&](int rank, Runtime& rt) {
          std::vector<float> grad(64, 1.0F);
          for (int step = 0; step < kSteps; ++step) {
            if (rank == late_rank) std::this_thread::sleep_for(kLate);
            require_ok(*rt.allreduce("grad", view_of(grad), view_of(grad), AllreduceOptions{}));
          }
          const RankLatenessRecorder* lateness = rt.worker(0).lateness();
          RANK_CHECK(lateness != nullptr);
          if (rank == 0) seen = lateness->snapshot();
          if (rank != 0) RANK_CHECK(lateness->snapshot().empty());
        },
        {{"RUNRUN_PROFILE", "1"}});
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].samples >= 15);
    CHECK(seen[1].samples >= 15);
    const int early_rank = 1 - late_rank;
    const double late_s = std::chrono::duration<double>(kLate).count();
    CHECK(seen[static_cast<size_t>(late_rank)].median_s > 0.5 * late_s);
    CHECK(seen[static_cast<size_t>(early_rank)].median_s <
          seen[static_cast<size_t>(late_rank)].median_s);
  }
}

TEST_CASE("rank lateness: nothing is recorded without RUNRUN_PROFILE", "[profile]") {
  run_ranks(2, [](int, Runtime& rt) {
    std::vector<float> grad(4, 1.0F);
    require_ok(*rt.allreduce("grad", view_of(grad), view_of(grad), AllreduceOptions{}));
    RANK_CHECK(rt.worker(0).lateness() == nullptr);
  });
}
