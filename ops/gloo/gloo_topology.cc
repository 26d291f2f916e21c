#include "ops/gloo/gloo_topology.h"

#include <unistd.h>

#include <climits>

#include "ops/base/host_topology.h"

namespace runrun::gloo_backend {

Topology topology_from_hosts(const std::vector<std::string>& hosts, int rank) {
  return topology_from_host_keys(hosts, rank);
}

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace runrun::gloo_backend
