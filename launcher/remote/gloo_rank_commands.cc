#include "launcher/remote/gloo_rank_commands.h"

#include "launcher/hosts/rank_topology.h"
#include "launcher/remote/remote_shell.h"
#include "launcher/remote/shell_words.h"

namespace runrun::launcher {

std::vector<std::string> build_gloo_rank_command(const LaunchOptions& options, const JobPlan& plan,
                                                 int rank, const std::string& cwd) {
  std::vector<int> layout;
  for (const auto& host : plan.hosts) layout.push_back(host.slots);
  std::vector<std::string> shim = {plan.launcher_path, kRankShimFlag,        format_layout(layout),
                                   kGlooRankFlag,      std::to_string(rank), "--"};
  shim.insert(shim.end(), options.command.begin(), options.command.end());
  const int host_index = topology_of_rank(rank, layout).host_index;
  const auto& host = plan.hosts[static_cast<std::size_t>(host_index)];
  if (host.name == "localhost") return shim;
  const std::string remote = "cd -- " + shell_quote(cwd) + " 2>/dev/null; exec " + shell_join(shim);
  return remote_shell_command(options, host.name, remote);
}

EnvEntries gloo_rank_environment(const JobPlan& plan, const Environment& launcher_env,
                                 const EnvEntries& job_entries) {
  EnvEntries entries;
  for (const auto& name : plan.env.by_name) {
    bool hidden = false;
    for (const auto& [hidden_name, value] : plan.env.hidden_values) {
      if (hidden_name == name) {
        entries.emplace_back(name, value);
        hidden = true;
      }
    }
    const auto found = launcher_env.find(name);
    if (!hidden && found != launcher_env.end()) entries.emplace_back(name, found->second);
  }
  entries.insert(entries.end(), plan.env.with_value.begin(), plan.env.with_value.end());
  entries.insert(entries.end(), job_entries.begin(), job_entries.end());
  return entries;
}

}  // namespace runrun::launcher
