#include "launcher/hosts/rank_topology.h"

#include <charconv>

#include "common/errors.h"

namespace runrun::launcher {

RankTopology topology_of_rank(int rank, const std::vector<int>& processes_per_host) {
  RankTopology topology;
  topology.rank = rank;
  int first = 0;
  for (std::size_t h = 0; h < processes_per_host.size(); ++h) {
    topology.size += processes_per_host[h];
    if (rank >= first && rank < first + processes_per_host[h]) {
      topology.host_index = static_cast<int>(h);
      topology.local_rank = rank - first;
      topology.local_size = processes_per_host[h];
    }
    first += processes_per_host[h];
  }
  for (std::size_t h = 0; h < processes_per_host.size(); ++h) {
    if (processes_per_host[h] <= topology.local_rank) continue;
    if (static_cast<int>(h) < topology.host_index) ++topology.cross_rank;
    ++topology.cross_size;
  }
  return topology;
}

std::string format_layout(const std::vector<int>& processes_per_host) {
  std::string out;
  for (int count : processes_per_host) {
    if (!out.empty()) out += ',';
    out += std::to_string(count);
  }
  return out;
}

std::vector<int> parse_layout(std::string_view text) {
  std::vector<int> layout;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const auto item = text.substr(start, comma - start);
    int value = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || value < 1) {
      throw InvalidArgumentError(
          RUNRUN_WHERE, "rank layout '" + std::string(text) + "' is not a list of positive counts");
    }
    layout.push_back(value);
    start = comma + 1;
  }
  return layout;
}

}  // namespace runrun::launcher
