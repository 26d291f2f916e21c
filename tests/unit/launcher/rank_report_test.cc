#include <catch2/catch.hpp>

#include <csignal>

#include "launcher/processes/rank_report.h"

using namespace runrun::launcher;

TEST_CASE("rank events round-trip through their marker line") {
  for (const RankEvent event :
       {RankEvent{RankEvent::Kind::kStarted, 0, 0}, RankEvent{RankEvent::Kind::kExited, 7, 3},
        RankEvent{RankEvent::Kind::kSignaled, 12, 9}, RankEvent{RankEvent::Kind::kStopped, 1, 143},
        RankEvent{RankEvent::Kind::kInitFailed, 3, 0}}) {
    std::string line = format_rank_event(event);
    REQUIRE(line.back() == '\n');
    line.pop_back();
    std::string rest = "x";
    const auto found = find_rank_event(line, &rest);
    REQUIRE(found);
    CHECK(*found == event);
    CHECK(rest.empty());
  }
}

TEST_CASE("a marker after a partial line keeps the partial line") {
  std::string line = "progress 50%" + format_rank_event({RankEvent::Kind::kExited, 2, 1});
  line.pop_back();
  std::string rest;
  const auto found = find_rank_event(line, &rest);
  REQUIRE(found);
  CHECK(found->rank == 2);
  CHECK(rest == "progress 50%");
}

TEST_CASE("ordinary and broken lines are not events") {
  std::string rest;
  CHECK_FALSE(find_rank_event("hello", &rest));
  CHECK_FALSE(find_rank_event(std::string(kRankMarker) + " exploded 1 2", &rest));
  CHECK_FALSE(find_rank_event(std::string(kRankMarker) + " exited x 2", &rest));
}

TEST_CASE("rank ends are described with code or signal") {
  CHECK(describe_rank_end({RankEvent::Kind::kExited, 0, 3}) == "exit code 3");
  CHECK_THAT(describe_rank_end({RankEvent::Kind::kSignaled, 0, SIGKILL}),
             Catch::StartsWith("signal 9 ("));
}

TEST_CASE("a runtime's report of the peer it failed because of is an event the launcher reads") {
  // common/rank_events.h writes these lines from inside a rank; the launcher parses them here.
  std::string rest;
  const auto lost = find_rank_event(std::string(kRankMarker) + " lost 2 0", &rest);
  REQUIRE(lost);
  CHECK(*lost == RankEvent{RankEvent::Kind::kPeerLost, 2, 0});
  const auto left = find_rank_event(std::string(kRankMarker) + " left 0 3", &rest);
  REQUIRE(left);
  CHECK(*left == RankEvent{RankEvent::Kind::kPeerLeft, 0, 3});
  CHECK(format_rank_event(*left) == std::string(kRankMarker) + " left 0 3\n");
  const auto silent = find_rank_event(std::string(kRankMarker) + " silent 0 1", &rest);
  REQUIRE(silent);
  CHECK(*silent == RankEvent{RankEvent::Kind::kPeerSilent, 0, 1});
}
