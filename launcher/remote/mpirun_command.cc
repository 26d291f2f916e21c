#include "launcher/remote/mpirun_command.h"

#include <algorithm>

#include "launcher/hosts/rank_topology.h"
#include "launcher/remote/shell_words.h"

namespace runrun::launcher {

std::vector<std::string> lifeline_keepalive_args(int peer_timeout_s,
                                                 const std::vector<std::string>& mpi_args) {
  if (peer_timeout_s <= 0) return {};
  for (const auto& word : mpi_args) {
    if (word.find("oob_tcp_keepalive") != std::string::npos) return {};
  }
  const int budget = std::max(2, peer_timeout_s * 2 / 3);  // seconds to notice a cut link
  const int idle = std::max(1, budget / 2);
  const int probes = budget - idle >= 2 ? 2 : 1;
  const int interval = std::max(1, (budget - idle) / probes);
  return {"--mca", "oob_tcp_keepalive_time",   std::to_string(idle),
          "--mca", "oob_tcp_keepalive_intvl",  std::to_string(interval),
          "--mca", "oob_tcp_keepalive_probes", std::to_string(probes)};
}

std::vector<std::string> build_mpirun_command(const LaunchOptions& options, const JobPlan& plan) {
  std::vector<std::string> argv = {plan.mpirun_path};
  if (plan.as_root) argv.emplace_back("--allow-run-as-root");
  // --noprefix: an mpirun started by absolute path otherwise acts as if given --prefix of its
  // own install and puts e.g. /usr/bin first on every rank's PATH (a venv's python3 loses to
  // the system one). An explicit --prefix in --mpi-args still applies.
  argv.insert(argv.end(), {"--noprefix", "-np", std::to_string(options.num_proc), "-H",
                           format_host_list(plan.hosts), "--bind-to", "none", "--map-by", "slot",
                           "--tag-output"});
  if (!options.rsh_agent.empty()) {
    argv.insert(argv.end(), {"--mca", "plm_rsh_agent", options.rsh_agent});
  }
  std::vector<std::string> ssh_args;
  if (options.ssh_port) ssh_args.insert(ssh_args.end(), {"-p", std::to_string(*options.ssh_port)});
  if (!options.ssh_identity_file.empty()) {
    ssh_args.insert(ssh_args.end(), {"-i", options.ssh_identity_file});
  }
  if (!ssh_args.empty()) argv.insert(argv.end(), {"--mca", "plm_rsh_args", shell_join(ssh_args)});
  if (!options.network_interface.empty()) {
    argv.insert(argv.end(), {"--mca", "btl_tcp_if_include", options.network_interface, "--mca",
                             "oob_tcp_if_include", options.network_interface});
  }
  const auto keepalive = lifeline_keepalive_args(plan.peer_timeout_s, options.mpi_args);
  argv.insert(argv.end(), keepalive.begin(), keepalive.end());
  for (const auto& name : plan.env.by_name) argv.insert(argv.end(), {"-x", name});
  for (const auto& [name, value] : plan.env.with_value) {
    argv.insert(argv.end(), {"-x", name + "=" + value});
  }
  argv.insert(argv.end(), options.mpi_args.begin(), options.mpi_args.end());
  std::vector<int> layout;
  for (const auto& host : plan.hosts) layout.push_back(host.slots);
  argv.insert(argv.end(), {plan.launcher_path, kRankShimFlag, format_layout(layout), "--"});
  argv.insert(argv.end(), options.command.begin(), options.command.end());
  return argv;
}

}  // namespace runrun::launcher
