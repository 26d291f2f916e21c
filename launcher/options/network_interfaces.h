#pragma once
// Why: --network-interface names the network for three consumers (mpirun's TCP, Gloo, NCCL),
// and horovodrun lets it be given several times and as lists. The items are gathered once
// here; NCCL's NCCL_SOCKET_IFNAME takes interface names only, so its value is derived here too.
// Thread-safety: pure functions.

#include <string>
#include <vector>

namespace runrun::launcher {

// The items of every --network-interface / --network-interfaces value (each a comma-separated
// list) as one comma-separated list, each item once, in the order given.
std::string join_interfaces(const std::vector<std::string>& given);

// The interface names among the items of `spec`, comma-separated: what NCCL_SOCKET_IFNAME gets.
// CIDR blocks (a.b.c.d/n) are left out: they name no interface that holds on every host.
std::string interface_names(const std::string& spec);

}  // namespace runrun::launcher
