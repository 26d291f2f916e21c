#pragma once
// Why: inside a Slurm allocation the ranks of a Gloo job start through srun, the way the
// cluster expects (compute nodes often allow no ssh; Slurm accounts, confines and cleans up
// what it started). This is the exact translation into srun's command line, in pure functions,
// so --dry-run prints what runs and unit tests compare argv exactly:
//   srun --label --ntasks N --nodes K --distribution arbitrary --kill-on-bad-exit=1
//     --export=ALL [--overlap] RUNRUN --rank-shim LAYOUT --srun-task -- COMMAND...
// with SLURM_HOSTFILE naming a file of one line per rank (its host), which places rank r
// exactly where the launcher's plan has it. The ranks' environment (the rendezvous secret
// included) travels in srun's environment, which srun copies to every task; nothing secret is on
// the command line.
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "launcher/remote/environment.h"
#include "launcher/options/launch_options.h"
#include "launcher/remote/mpirun_command.h"

namespace runrun::launcher {

// The rank shim's argument (argv[3]) for a task srun started: its rank is SLURM_PROCID.
inline constexpr const char* kSrunTaskFlag = "--srun-task";

// The argv of the srun command that starts every rank of the plan; `inside_step`: the launcher
// runs in an srun step, whose resources the new step shares (--overlap).
std::vector<std::string> build_srun_command(const LaunchOptions& options, const JobPlan& plan,
                                            const std::string& srun_path, bool inside_step = false);

// The content of SLURM_HOSTFILE: rank r's host (as Slurm names it) on line r.
std::string srun_hostfile(const JobPlan& plan);

// The srun on `env`'s PATH. Throws InvalidArgumentError saying how to get it.
std::string find_srun(const Environment& env);

}  // namespace runrun::launcher
