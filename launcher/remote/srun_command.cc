#include "launcher/remote/srun_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include "common/errors.h"
#include "launcher/hosts/rank_topology.h"

namespace runrun::launcher {

std::vector<std::string> build_srun_command(const LaunchOptions& options, const JobPlan& plan,
                                            const std::string& srun_path, bool inside_step) {
  std::vector<int> layout;
  for (const auto& host : plan.hosts) layout.push_back(host.slots);
  // --label: "R: " before every line, which the output router turns into runrun's tags.
  // --kill-on-bad-exit: a task that fails ends the step at once (its peers would notice within
  // the peer timeout anyway).
  std::vector<std::string> argv = {
      srun_path, "--label", "--ntasks", std::to_string(options.num_proc), "--nodes",
      std::to_string(plan.hosts.size()), "--distribution", "arbitrary", "--kill-on-bad-exit=1",
      // The ranks' environment travels in srun's: whatever
      // SLURM_EXPORT_ENV (sbatch --export=NONE) says.
      "--export=ALL"};
  if (inside_step) argv.emplace_back("--overlap");
  argv.insert(argv.end(),
              {plan.launcher_path, kRankShimFlag, format_layout(layout), kSrunTaskFlag, "--"});
  argv.insert(argv.end(), options.command.begin(), options.command.end());
  return argv;
}

std::string srun_hostfile(const JobPlan& plan) {
  std::string text;
  for (std::size_t i = 0; i < plan.hosts.size(); ++i) {
    const std::string& name =
        i < plan.host_labels.size() ? plan.host_labels[i] : plan.hosts[i].name;
    for (int slot = 0; slot < plan.hosts[i].slots; ++slot) text += name + "\n";
  }
  return text;
}

std::string find_srun(const Environment& env) {
  const auto path_entry = env.find("PATH");
  const std::string path = path_entry == env.end() ? "/usr/bin:/bin" : path_entry->second;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t colon = path.find(':', start);
    if (colon == std::string::npos) colon = path.size();
    const std::string candidate =
        (colon == start ? "." : path.substr(start, colon - start)) + "/srun";
    struct stat info{};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = colon + 1;
  }
  throw InvalidArgumentError(RUNRUN_WHERE,
                             "runrun runs in a Slurm allocation (SLURM_JOB_ID is "
                             "set) and starts the ranks through srun, which is not "
                             "on PATH (" +
                                 path +
                                 "): load Slurm's module or put "
                                 "its bin/ on PATH");
}

}  // namespace runrun::launcher
