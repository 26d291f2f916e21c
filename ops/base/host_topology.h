#pragma once
// Why: backends that know every rank's host (gloo through the rendezvous store, the in-process
// local backend through its world) derive the same topology from it, as Horovod does: local =
// the ranks on my host in rank order; cross = the ranks with my local_rank in rank order (one
// per host); homogeneous = every host has the same number of ranks.
// Thread-safety: pure function.

#include <map>
#include <vector>

#include "ops/backend.h"

namespace runrun {

// `host_of_rank[r]` identifies rank r's host (any ordered key: a name, an index).
template <typename HostKey>
Topology topology_from_host_keys(const std::vector<HostKey>& host_of_rank, int rank) {
  Topology t;
  t.rank = rank;
  t.size = static_cast<int>(host_of_rank.size());
  std::vector<int> local_rank_of(host_of_rank.size());
  std::map<HostKey, int> count_per_host;
  for (size_t r = 0; r < host_of_rank.size(); ++r) {
    local_rank_of[r] = count_per_host[host_of_rank[r]]++;
  }
  const auto me = static_cast<size_t>(rank);
  t.local_rank = local_rank_of[me];
  t.local_size = count_per_host[host_of_rank[me]];
  t.cross_rank = 0;
  t.cross_size = 0;
  for (size_t r = 0; r < host_of_rank.size(); ++r) {
    if (local_rank_of[r] != t.local_rank) continue;
    if (r < me) ++t.cross_rank;
    ++t.cross_size;
  }
  for (const auto& [host, count] : count_per_host) {
    if (count != t.local_size) t.homogeneous = false;
  }
  return t;
}

}  // namespace runrun
