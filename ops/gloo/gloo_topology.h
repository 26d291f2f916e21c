#pragma once
// Why: gloo has no notion of hosts; the backend derives local and cross ranks from one host id
// per rank (exchanged through the rendezvous store), the same way as Horovod and the local
// backend: local = ranks with my host id in rank order; cross = ranks with my local_rank, in
// rank order (one per host).
// Thread-safety: pure function.

#include <string>
#include <vector>

#include "ops/backend.h"

namespace runrun::gloo_backend {

Topology topology_from_hosts(const std::vector<std::string>& hosts, int rank);

// This machine's host name ("localhost" when it has none).
std::string this_host_name();

}  // namespace runrun::gloo_backend
