#include "launcher/options/network_check_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/errors.h"

namespace runrun::launcher {
namespace {

double positive_number(const std::string& text, const char* flag, double most) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value) ||
      value <= 0 || value > most) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               std::string(flag) + " must be a number above 0 " + "and at most " +
                                   std::to_string(static_cast<int>(most)) + ", got '" + text + "'");
  }
  return value;
}

}  // namespace

void add_network_check_flags(CLI::App& app, NetworkCheckFlags& flags) {
  app.add_flag("--check-network", flags.check_network,
               "measure latency and bandwidth of every host pair and allreduce across the hosts, "
               "over the job's transport; then run the command, if any");
  app.add_option("--min-bandwidth", flags.min_bandwidth,
                 "with --check-network: exit 3 (and run no command) when a host pair is below "
                 "this many Gbit/s");
  app.add_option("--check-network-seconds", flags.budget_s,
                 "with --check-network: seconds per measurement (default 0.15)");
}

NetworkCheckOptions validate_network_check(const NetworkCheckFlags& flags) {
  NetworkCheckOptions options;
  options.enabled = flags.check_network;
  if (!flags.check_network && (!flags.min_bandwidth.empty() || !flags.budget_s.empty())) {
    throw InvalidArgumentError(
        RUNRUN_WHERE,
        std::string(flags.min_bandwidth.empty() ? "--check-network-seconds" : "--min-bandwidth") +
            " applies to --check-network: add it");
  }
  if (!flags.min_bandwidth.empty()) {
    options.min_bandwidth_gbit = positive_number(flags.min_bandwidth, "--min-bandwidth", 1e6);
  }
  if (!flags.budget_s.empty()) {
    options.budget_s = positive_number(flags.budget_s, "--check-network-seconds", 60);
  }
  return options;
}

}  // namespace runrun::launcher
