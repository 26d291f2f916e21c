#pragma once
// Why: the launcher places ranks one slot per process in host order, so each rank's local and
// cross position follows from its world rank and the per-host process counts. The rank shim
// computes RUNRUN_RANK/SIZE/LOCAL_*/CROSS_* with this; the launcher names a failed rank's host
// with it. Cross rank/size follow Horovod: the ranks with the same local rank form a cross
// group, ordered by host.
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

namespace runrun::launcher {

struct RankTopology {
  int rank = 0, size = 0;
  int local_rank = 0, local_size = 0;
  int cross_rank = 0, cross_size = 0;
  int host_index = 0;  // index into the host list

  bool operator==(const RankTopology&) const = default;
};

// `processes_per_host[h]` processes run on host h, ranks assigned in host order.
// Requires 0 <= rank < sum(processes_per_host).
RankTopology topology_of_rank(int rank, const std::vector<int>& processes_per_host);

// "2,2,1" <-> {2,2,1}. parse throws InvalidArgumentError on anything else.
std::string format_layout(const std::vector<int>& processes_per_host);
std::vector<int> parse_layout(std::string_view text);

}  // namespace runrun::launcher
