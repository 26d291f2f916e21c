#pragma once
// Why: both ends of a job must agree on addresses that work across its hosts. The launcher
// must tell its ranks an address of its own that they can reach (where the rendezvous server
// listens), and each Gloo rank must listen on an address its peers can reach. Both follow the
// same rule: the network the user named (--network-interface: interface names or CIDR blocks),
// else the address this host uses to reach the other side.
// Thread-safety: pure functions over the host's interfaces and routing table.

#include <string>

namespace runrun::rendezvous {

// The first IPv4 address of this host selected by `spec` (comma-separated interface names or
// a.b.c.d/n blocks, tried in order); "" when none matches.
std::string address_selected_by(const std::string& spec);

// The source address this host uses to reach `host` (a name or an IPv4 address); nothing is
// sent. Throws InvalidArgumentError naming the host when it does not resolve or has no route.
std::string address_towards(const std::string& host);

}  // namespace runrun::rendezvous
