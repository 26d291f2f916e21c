#pragma once
// Why: with `runrun --gloo` the launcher starts every rank itself — no mpirun. This is the
// exact translation of the command line into each rank's command and environment, in pure
// functions, so --dry-run prints what runs and unit tests compare argv exactly:
//   local rank:  RUNRUN --rank-shim LAYOUT --gloo-rank R -- COMMAND...
//   remote rank: ssh -o BatchMode=yes [-p P] [-i F] HOST 'cd -- CWD 2>/dev/null; exec RUNRUN
//                --rank-shim LAYOUT --gloo-rank R -- COMMAND...'   (or AGENT HOST '...')
// Nothing secret is on these command lines: the rank's environment, the rendezvous secret
// included, travels on its stdin (rank_environment_block.h).
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "launcher/options/launch_options.h"
#include "launcher/remote/mpirun_command.h"
#include "launcher/remote/rank_environment_block.h"

namespace runrun::launcher {

// The rank shim's argument that selects launcher mode (argv[3]), followed by the world rank.
inline constexpr const char* kGlooRankFlag = "--gloo-rank";

// What starts world rank `rank` (its host from the plan's layout); `cwd` is where the ranks run
// (the launcher's directory; on another host, when it exists there, as mpirun does).
std::vector<std::string> build_gloo_rank_command(const LaunchOptions& options, const JobPlan& plan,
                                                 int rank, const std::string& cwd);

// The environment block of every rank: what plan.env forwards (-x NAME with the launcher's
// value, NAME=value, hidden values), then `job_entries` (the rendezvous server and secret, the
// controller, the network). Local ranks get it on top of the launcher's environment (as under
// mpirun), remote ranks on top of their login environment.
EnvEntries gloo_rank_environment(const JobPlan& plan, const Environment& launcher_env,
                                 const EnvEntries& job_entries);

}  // namespace runrun::launcher
