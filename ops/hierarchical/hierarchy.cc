#include "ops/hierarchical/hierarchy.h"

#include <algorithm>
#include <map>

#include "common/errors.h"

namespace runrun {

HierarchySplit split_hierarchy(Backend& flat, const std::vector<int32_t>& all, std::string* why_not,
                               Backend* cross_from) {
  const auto n = static_cast<size_t>(flat.size());
  std::map<int32_t, std::vector<int>> hosts;  // cross_rank -> its ranks, in rank order
  for (size_t r = 0; r < n; ++r) hosts[all[3 * r]].push_back(static_cast<int>(r));
  std::string problem;
  const size_t per_host = hosts.begin()->second.size();
  if (hosts.size() < 2) {
    problem = "every rank is on one host";
  } else if (per_host < 2) {
    problem = "one rank per host";
  }
  for (const auto& [host, ranks] : hosts) {
    if (problem.empty() && ranks.size() != per_host) {
      problem = "hosts hold different numbers of ranks (host " + std::to_string(host) + ": " +
                std::to_string(ranks.size()) + ", host " + std::to_string(hosts.begin()->first) +
                ": " + std::to_string(per_host) + ")";
    }
  }
  for (size_t r = 0; r < n && problem.empty(); ++r) {
    if (static_cast<size_t>(all[3 * r + 1]) != per_host ||
        static_cast<size_t>(all[3 * r + 2]) != hosts.size()) {
      problem = "rank " + std::to_string(r) + "'s local_size/cross_size do not match the hosts";
    }
  }
  if (!problem.empty()) {
    if (why_not != nullptr) *why_not = problem;
    return {};
  }
  // Every rank takes part in every split (create_subgroup is collective over the flat group).
  const auto me = static_cast<int>(flat.rank());
  Backend& across = cross_from != nullptr ? *cross_from : flat;
  RUNRUN_ENFORCE(across.rank() == me && across.size() == flat.size(), InternalError,
                 "hierarchical allreduce on rank " + std::to_string(me) + ": the " +
                     std::string(across.name()) +
                     " backend for the stage across hosts numbers "
                     "this rank " +
                     std::to_string(across.rank()) + " of " + std::to_string(across.size()) +
                     ", the " + std::string(flat.name()) + " backend " + std::to_string(me) +
                     " of " + std::to_string(flat.size()));
  HierarchySplit split;
  size_t place = 0;
  for (const auto& [host, ranks] : hosts) {
    auto group = flat.create_subgroup(ranks);
    if (group) {
      split.local = std::move(group);
      place = static_cast<size_t>(std::find(ranks.begin(), ranks.end(), me) - ranks.begin());
    }
  }
  for (size_t j = 0; j < per_host; ++j) {
    std::vector<int> ranks;
    for (const auto& entry : hosts) ranks.push_back(entry.second[j]);
    std::sort(ranks.begin(), ranks.end());
    auto group = across.create_subgroup(ranks);
    if (j == place) split.cross = std::move(group);
  }
  RUNRUN_ENFORCE(split.local && split.cross, InternalError,
                 "hierarchical allreduce on rank " + std::to_string(me) +
                     ": this rank is missing from its host's or its cross group");
  return split;
}

}  // namespace runrun
