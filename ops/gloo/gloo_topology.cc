#include "ops/gloo/gloo_topology.h"

#include <unistd.h>

#include <climits>
#include <map>

namespace runrun::gloo_backend {

Topology topology_from_hosts(const std::vector<std::string>& hosts, int rank) {
  Topology t;
  t.rank = rank;
  t.size = static_cast<int>(hosts.size());
  std::vector<int> local_rank_of(hosts.size());
  std::map<std::string, int> count_per_host;
  for (size_t r = 0; r < hosts.size(); ++r) local_rank_of[r] = count_per_host[hosts[r]]++;
  const auto me = static_cast<size_t>(rank);
  t.local_rank = local_rank_of[me];
  t.local_size = count_per_host[hosts[me]];
  t.cross_rank = 0;
  t.cross_size = 0;
  for (size_t r = 0; r < hosts.size(); ++r) {
    if (local_rank_of[r] != t.local_rank) continue;
    if (r < me) ++t.cross_rank;
    ++t.cross_size;
  }
  return t;
}

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace runrun::gloo_backend
