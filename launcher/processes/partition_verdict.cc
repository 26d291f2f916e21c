#include "launcher/processes/partition_verdict.h"

#include <algorithm>
#include <deque>
#include <map>

namespace runrun::launcher {
namespace {

// Each host's side (0 or 1) such that every reported loss crosses the sides; nullopt when no
// such split exists or the losses do not join every host into one (then the sides are unknown).
std::optional<std::map<int, int>> sides_of_hosts(const std::vector<RankLossReport>& reports) {
  std::map<int, std::vector<int>> edges;  // host -> hosts it lost a rank of, or was lost by
  for (const RankLossReport& report : reports) edges[report.host];
  for (const RankLossReport& report : reports) {
    if (report.lost_peer < 0) continue;
    const int other = reports[static_cast<std::size_t>(report.lost_peer)].host;
    if (other == report.host) return std::nullopt;  // a rank lost a peer on its own host
    edges[report.host].push_back(other);
    edges[other].push_back(report.host);
  }
  if (edges.size() < 2) return std::nullopt;
  std::map<int, int> side{{edges.begin()->first, 0}};
  std::deque<int> queue{edges.begin()->first};
  while (!queue.empty()) {
    const int host = queue.front();
    queue.pop_front();
    for (const int other : edges[host]) {
      const auto [it, added] = side.emplace(other, 1 - side[host]);
      if (added) {
        queue.push_back(other);
      } else if (it->second == side[host]) {
        return std::nullopt;  // losses within one side: not a split in two
      }
    }
  }
  if (side.size() != edges.size()) return std::nullopt;
  return side;
}

}  // namespace

std::optional<Partition> find_partition(const std::vector<RankLossReport>& reports) {
  for (const RankLossReport& report : reports) {
    if (report.lost_peer >= static_cast<int>(reports.size())) return std::nullopt;
  }
  const auto side = sides_of_hosts(reports);
  if (!side) return std::nullopt;
  Partition partition;
  bool reported[2] = {true, true};
  bool reported_or_unheard[2] = {true, true};
  for (std::size_t rank = 0; rank < reports.size(); ++rank) {
    const RankLossReport& report = reports[rank];
    const int s = side->at(report.host);
    partition.ranks[s].push_back(static_cast<int>(rank));
    if (std::find(partition.hosts[s].begin(), partition.hosts[s].end(), report.host) ==
        partition.hosts[s].end()) {
      partition.hosts[s].push_back(report.host);
    }
    const bool lost_other_side = report.lost_peer >= 0;  // crosses the sides (sides_of_hosts)
    reported[s] = reported[s] && lost_other_side;
    reported_or_unheard[s] = reported_or_unheard[s] && (lost_other_side || !report.end_heard);
  }
  // One side's every rank lost the other side; the other side's ranks lost it too, or were
  // heard of no more.
  const bool split =
      (reported[0] && reported_or_unheard[1]) || (reported[1] && reported_or_unheard[0]);
  if (!split) return std::nullopt;
  for (int s = 0; s < 2; ++s) {
    std::sort(partition.hosts[s].begin(), partition.hosts[s].end());
    partition.side_reported[s] = reported[s];
  }
  if (partition.hosts[1].front() < partition.hosts[0].front()) {
    std::swap(partition.hosts[0], partition.hosts[1]);
    std::swap(partition.ranks[0], partition.ranks[1]);
    std::swap(partition.side_reported[0], partition.side_reported[1]);
  }
  return partition;
}

std::string describe_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t last = i;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    text += (text.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (last > i) text += "-" + std::to_string(ranks[last]);
    i = last + 1;
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + text;
}

std::string describe_partition(const Partition& partition,
                               const std::vector<std::string>& host_labels) {
  std::string side_text[2];
  for (int s = 0; s < 2; ++s) {
    std::string hosts;
    for (const int host : partition.hosts[s]) {
      hosts +=
          (hosts.empty() ? "" : ", ") + (host >= 0 && host < static_cast<int>(host_labels.size())
                                             ? host_labels[static_cast<std::size_t>(host)]
                                             : "?");
    }
    side_text[s] = (partition.hosts[s].size() == 1 ? "host " : "hosts ") + hosts + " (" +
                   describe_ranks(partition.ranks[s]) + ")";
  }
  std::string how;
  if (partition.side_reported[0] && partition.side_reported[1]) {
    how = "every rank on each side lost the ranks on the other side";
  } else {
    const int s = partition.side_reported[0] ? 0 : 1;
    how = "every rank on " + side_text[s] + " lost the ranks on the other side, from which " +
          "nothing more was heard";
  }
  return "the network link between " + side_text[0] + " and " + side_text[1] +
         " was lost (a network partition, or one side's hosts went down): " + how +
         "; no rank caused the failure, and the ranks were stopped. Check the network between "
         "the two sides";
}

}  // namespace runrun::launcher
