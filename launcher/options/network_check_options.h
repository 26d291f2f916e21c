#pragma once
// Why: the flags of `runrun --check-network` (--check-network, --min-bandwidth,
// --check-network-seconds) are declared and validated in one place, apart from the general
// command line, into NetworkCheckOptions (launch_options.h).
// Thread-safety: plain functions.

#include <string>

#include <CLI/CLI.hpp>

#include "launcher/options/launch_options.h"

namespace runrun::launcher {

// What CLI11 fills, before validation.
struct NetworkCheckFlags {
  bool check_network = false;
  std::string min_bandwidth;  // Gbit/s, as written
  std::string budget_s;       // seconds per measurement, as written
};

void add_network_check_flags(CLI::App& app, NetworkCheckFlags& flags);

// Throws InvalidArgumentError naming the flag for a value that is not a number in range, or
// --min-bandwidth / --check-network-seconds without --check-network.
NetworkCheckOptions validate_network_check(const NetworkCheckFlags& flags);

}  // namespace runrun::launcher
