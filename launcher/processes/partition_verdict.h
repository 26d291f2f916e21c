#pragma once
// Why: when the network between two groups of hosts is cut, every rank fails with a lost peer,
// and the rank the summary would follow the "failed because of" reports to is an arbitrary
// healthy one (issue 36, point 3: "rank 0 on host rt1 failed ... failing because of rank 0"
// after the second host's link was cut). The ranks' reports say more: when every rank on one
// side of a split of the hosts reported a rank on the other side lost, and the ranks on that
// other side either reported the first side lost or were heard of no more (their reports could
// not cross the cut), the link between the two sides was lost, and no rank caused it. A rank
// that lost a peer on its own host, or one that ended for a reason of its own, rules it out
// (a rank crashed or hung; the usual summary names it).
// Thread-safety: pure functions.

#include <optional>
#include <string>
#include <vector>

namespace runrun::launcher {

// What the launcher heard from one rank.
struct RankLossReport {
  int host = 0;            // index of the rank's host
  int lost_peer = -1;      // the first peer its runtime reported lost (or silent); -1: none
  bool end_heard = false;  // its rank shim reported how it ended (exit, signal, stopped)
};

struct Partition {
  // The two sides, the one with the lowest host index first: host indices and ranks, ascending.
  std::vector<int> hosts[2];
  std::vector<int> ranks[2];
  bool side_reported[2] = {false, false};  // every rank of the side reported the other side lost
};

// The partition `reports` (one per rank) show, or nullopt when they do not show one.
std::optional<Partition> find_partition(const std::vector<RankLossReport>& reports);

// "ranks 0-1, 4", "rank 3".
std::string describe_ranks(const std::vector<int>& ranks);

// The summary's account of `partition` (without "runrun: "), naming hosts by `host_labels`.
std::string describe_partition(const Partition& partition,
                               const std::vector<std::string>& host_labels);

}  // namespace runrun::launcher
