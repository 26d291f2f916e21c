// The launcher's summary of a failed job (launcher/processes/failure_ledger.h): which rank it
// names, and
// the network partition it names instead of a rank (launcher/processes/partition_verdict.h).
#include <catch2/catch.hpp>

#include "launcher/processes/failure_ledger.h"
#include "launcher/processes/partition_verdict.h"

using namespace runrun::launcher;
using Kind = RankEvent::Kind;

namespace {

const std::vector<std::string> kLabels = {"a", "b", "c"};

// Rank `rank` lost `peer` and then exited 1, its shim reporting it.
void lost_then_failed(FailureLedger& ledger, int rank, int peer) {
  ledger.note({Kind::kPeerLost, rank, peer});
  ledger.note({Kind::kPeerSilent, rank, peer});
  ledger.note({Kind::kExited, rank, 1});
  ledger.record_failure({Kind::kExited, rank, 1});
}

}  // namespace

TEST_CASE("a rank that failed in init is named although a healthy peer failed first") {
  FailureLedger ledger(2);
  ledger.record_failure({Kind::kExited, 0, 1});  // the healthy rank, left waiting in init()
  ledger.note({Kind::kInitFailed, 1, 0});
  ledger.record_failure({Kind::kExited, 1, 1});
  CHECK(ledger.culprit().rank == 1);
  const auto summary = ledger.summarize({0, 0}, {"localhost"});
  CHECK(summary.text ==
        "rank 1 on host localhost failed in init() with exit code 1 (its error is above); the "
        "other ranks were stopped (2 ranks failed in all; rank 0 ended first, failing because "
        "of rank 1)");
  CHECK(summary.exit_code == 1);
}

TEST_CASE("without an init failure the causes are followed as before") {
  FailureLedger ledger(3);
  ledger.note({Kind::kPeerLeft, 0, 1});
  ledger.record_failure({Kind::kExited, 0, 1});
  ledger.record_failure({Kind::kExited, 1, 4});
  CHECK(ledger.culprit().rank == 1);
  const auto summary = ledger.summarize({0, 0, 0}, {"localhost"});
  CHECK(summary.text ==
        "rank 1 on host localhost failed with exit code 4; the other ranks were "
        "stopped (2 ranks failed in all; rank 0 ended first, failing because of "
        "rank 1)");
  CHECK(summary.exit_code == 4);
}

TEST_CASE("a cut between two hosts is summarized as a lost link, not a rank") {
  FailureLedger ledger(4);  // ranks 0-1 on host a, 2-3 on host b
  lost_then_failed(ledger, 3, 0);
  lost_then_failed(ledger, 1, 3);
  lost_then_failed(ledger, 0, 2);
  lost_then_failed(ledger, 2, 0);
  const auto summary = ledger.summarize({0, 0, 1, 1}, kLabels);
  CHECK(summary.text.rfind("the network link between host a (ranks 0-1) and host b (ranks 2-3) "
                           "was lost (a network partition, or one side's hosts went down): every "
                           "rank on each side lost the ranks on the other side; no rank caused "
                           "the failure",
                           0) == 0);
  CHECK(summary.exit_code == 1);
}

TEST_CASE("a crashed rank whose host's other rank lost it too is named, not a partition") {
  FailureLedger ledger(4);
  ledger.note({Kind::kSignaled, 2, 9});
  ledger.record_failure({Kind::kSignaled, 2, 9});
  lost_then_failed(ledger, 0, 2);
  lost_then_failed(ledger, 1, 2);
  lost_then_failed(ledger, 3, 2);
  const auto summary = ledger.summarize({0, 0, 1, 1}, kLabels);
  CHECK(summary.text.rfind("rank 2 on host b failed with signal 9", 0) == 0);
  CHECK(summary.exit_code == 137);
}

TEST_CASE("partition: one side reported, the other was heard of no more") {
  // Host b's reports could not cross the cut (a remote shell over the cut link).
  const auto partition =
      find_partition({{0, 2, true}, {0, 3, true}, {1, -1, false}, {1, -1, false}});
  REQUIRE(partition);
  CHECK(partition->ranks[0] == std::vector<int>{0, 1});
  CHECK(partition->ranks[1] == std::vector<int>{2, 3});
  CHECK(partition->side_reported[0]);
  CHECK_FALSE(partition->side_reported[1]);
  CHECK(describe_partition(*partition, kLabels)
            .find("every rank on host a (ranks 0-1) lost the ranks on the other side, from "
                  "which nothing more was heard") != std::string::npos);
}

TEST_CASE("partition: one host cut from two others, sides named by their hosts") {
  // Hosts a and c (ranks 0, 2) keep each other; host b (rank 1) is cut from both.
  const auto partition = find_partition({{0, 1, true}, {1, 2, true}, {2, 1, true}});
  REQUIRE(partition);
  CHECK(partition->hosts[0] == std::vector<int>{0, 2});
  CHECK(partition->hosts[1] == std::vector<int>{1});
  CHECK(describe_partition(*partition, kLabels)
            .rfind("the network link between hosts a, c (ranks 0, 2) and host b (rank 1)", 0) == 0);
}

TEST_CASE("partition: what rules it out") {
  SECTION("a rank that lost a peer on its own host") {
    CHECK_FALSE(find_partition({{0, 2, true}, {0, 0, true}, {1, 0, true}, {1, 0, true}}));
  }
  SECTION("a lone rank per host that ended for a reason of its own (its shim said so)") {
    CHECK_FALSE(find_partition({{0, 1, true}, {1, -1, true}}));
  }
  SECTION("not every rank of either side reported a loss") {
    CHECK_FALSE(find_partition({{0, 2, true}, {0, -1, true}, {1, -1, false}, {1, -1, false}}));
  }
  SECTION("a single host") { CHECK_FALSE(find_partition({{0, 1, true}, {0, 0, true}})); }
  SECTION("a host no loss involves: its side is unknown") {
    CHECK_FALSE(find_partition({{0, 1, true}, {1, 0, true}, {2, -1, true}}));
  }
  SECTION("losses that do not split the hosts in two") {
    CHECK_FALSE(find_partition({{0, 1, true}, {1, 2, true}, {2, 0, true}}));
  }
}

TEST_CASE("rank lists are written as ranges") {
  CHECK(describe_ranks({3}) == "rank 3");
  CHECK(describe_ranks({0, 1, 2, 5, 7, 8}) == "ranks 0-2, 5, 7-8");
}
