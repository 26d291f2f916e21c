#pragma once
// Why: `runrun --check-network` (docs/launcher.md) measures the network a job would use, over
// the same transport, before the user spends hours finding a slow link by hand. The launcher
// cannot link the backends (docs/architecture.md), so it starts the measuring program
// (runrun-check-network, built next to runrun) as a job of its own, one process per host,
// through the same launch path as a training job (mpirun or --gloo, rendezvous, remote shell),
// reads rank 0's report from that job's output and turns it into an exit status.
// Thread-safety: main thread only (it runs a supervised job).

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launcher/options/launch_options.h"

namespace runrun::launcher {

// --check-network ran and some pair is below --min-bandwidth.
inline constexpr int kExitBelowMinBandwidth = 3;

// Runs one job with these options whose ranks' stdout goes to `capture` instead of the
// launcher's stdout; returns the launcher's exit status for it (launcher_main's run path).
using CapturedJobRunner = std::function<int(const LaunchOptions& options, std::FILE* capture)>;

// The options of the measuring job: one process per host the job uses, running
// `checker_path --hosts a,b,... [--min-bandwidth G] [--budget-s S]`; elastic and output files off.
LaunchOptions network_check_job(const LaunchOptions& options, const std::string& checker_path,
                                double budget_s);

// What the worker's rank 0 printed (captured rank output, "[0]<stdout>:" lines), split into the
// report lines for the user and the status. Throws InvalidArgumentError when no status line is
// there.
struct NetworkCheckOutput {
  std::vector<std::string> report;
  bool below_minimum = false;
  double link_gbit = 0;  // the median host pair's bandwidth (0 with one host)
};
NetworkCheckOutput parse_network_check_output(const std::string& captured);

// Runs the check, prints the report on stdout; returns 0, kExitBelowMinBandwidth, or the
// measuring job's failure status (its errors are on stderr).
int run_network_check(const LaunchOptions& options, const std::string& checker_path,
                      const CapturedJobRunner& run);

// `runrun --profile` on more than one host: a quick check (no report printed) whose median pair
// bandwidth the profile compares busbw with. Returns 0 when it could not be measured (one
// host, or the check failed: said on stderr; the job runs anyway).
double measure_link_gbit(const LaunchOptions& options, const std::string& checker_path,
                         const CapturedJobRunner& run);

}  // namespace runrun::launcher
