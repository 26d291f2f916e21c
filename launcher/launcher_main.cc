#include "launcher/launcher_main.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <iostream>

#include "common/errors.h"
#include "launcher/check_build.h"
#include "launcher/command_line.h"
#include "launcher/mpirun_command.h"
#include "launcher/preflight.h"
#include "launcher/rank_shim.h"
#include "launcher/shell_words.h"
#include "launcher/supervisor.h"
#include "runrun/build_config.h"

namespace runrun::launcher {
namespace {

constexpr int kExitUsage = 2;
constexpr int kSshConnectTimeoutS = 5;

std::string own_executable() {
  char path[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw InvalidArgumentError(RUNRUN_WHERE, "cannot find the runrun executable's path");
  return std::string(path, static_cast<std::size_t>(n));
}

void make_output_dir(const std::string& dir) {
  std::string partial;
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      partial = dir.substr(0, i);
      if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
        throw InvalidArgumentError(RUNRUN_WHERE, "--output-filename: cannot create '" + partial +
                                                     "': " + std::strerror(errno));
      }
    }
  }
}

// The PATH the ranks' command runs with (what RUNRUN_RANK_PATH carries).
std::string rank_path(const ForwardedEnv& forwarded, const Environment& env) {
  for (const auto& [name, value] : forwarded.with_value) {
    if (name == kRankPathEnv) return value;
  }
  const auto path = env.find("PATH");
  return path == env.end() ? "/bin:/usr/bin" : path->second;  // execvp's default
}

// Runs every local check, then builds the plan. Throws InvalidArgumentError.
JobPlan plan_job(const LaunchOptions& options, const Environment& env,
                 const LocalHostNames& local) {
  check_process_count(options);
  check_command(options);
  check_duplicate_hosts(options.hosts, local);
  check_network_interfaces(options.network_interface, local_interface_names());
  JobPlan plan;
  for (const auto& host : hosts_for_processes(options.hosts, options.num_proc)) {
    plan.host_labels.push_back(host.name);
    plan.hosts.push_back({local.is_local(host.name) ? "localhost" : host.name, host.slots});
  }
  plan.env = plan_forwarded_env(env, options.knob_values, options.extra_env);
  const bool local_ranks =
      std::any_of(plan.hosts.begin(), plan.hosts.end(),
                  [](const HostSlots& host) { return host.name == "localhost"; });
  if (local_ranks) check_program_found(options.command.front(), rank_path(plan.env, env));
  plan.mpirun_path = find_open_mpi_mpirun(env);
  plan.launcher_path = own_executable();
  plan.as_root = geteuid() == 0;
  return plan;
}

int run_job(const LaunchOptions& options, const Environment& env) {
  const LocalHostNames local = LocalHostNames::detect();
  const JobPlan plan = plan_job(options, env, local);
  const auto argv = build_mpirun_command(options, plan);
  std::vector<std::string> hidden;
  for (const auto& [name, value] : plan.env.hidden_values) hidden.push_back(name + "=" + value);
  if (options.dry_run) {
    std::cout << shell_join(argv) << std::endl;
    for (const auto& [name, value] : plan.env.hidden_values) {
      std::cerr << "runrun: " << name << " is set in mpirun's environment (value not shown)\n";
    }
    return 0;
  }
  if (!options.output_dir.empty()) make_output_dir(options.output_dir);
  std::vector<std::string> remote;
  for (const auto& host : plan.hosts) {
    if (host.name != "localhost") remote.push_back(host.name);
  }
  check_remote_hosts(remote, options, kSshConnectTimeoutS);
  if (options.verbose) {
    std::cerr << "runrun: " << options.num_proc << " processes on " << format_host_list(plan.hosts)
              << " (" << remote.size() << " remote host(s) reachable)\n";
    for (const auto& name : plan.env.withheld) {
      std::cerr << "runrun: not forwarding " << name << " (looks like a secret; use -x " << name
                << " to forward it)\n";
    }
    std::cerr << "runrun: running " << shell_join(argv) << std::endl;
  }
  SupervisorSettings settings;
  settings.argv = argv;
  settings.extra_env = hidden;
  settings.num_proc = options.num_proc;
  for (const auto& host : plan.hosts) settings.layout.push_back(host.slots);
  settings.host_labels = plan.host_labels;
  settings.start_timeout_s = options.start_timeout_s;
  settings.output_dir = options.output_dir;
  settings.verbose = options.verbose;
  return supervise(settings);
}

}  // namespace

int launcher_main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], kRankShimFlag) == 0) return run_rank_shim(argc, argv);
  const Environment env = current_environment();
  try {
    const ParsedCommandLine parsed =
        parse_command_line(std::vector<std::string>(argv + 1, argv + argc), env, std::cout);
    switch (parsed.action) {
      case ParsedCommandLine::Action::kExit:
        return parsed.exit_code;
      case ParsedCommandLine::Action::kCheckBuild:
        std::cout << format_check_build(detect_build_features(), RUNRUN_VERSION);
        return 0;
      case ParsedCommandLine::Action::kRun:
        break;
    }
    return run_job(parsed.options, env);
  } catch (const Error& error) {
    std::cerr << "runrun: error: " << error.what() << std::endl;
    return kExitUsage;
  }
}

}  // namespace runrun::launcher
