#include "launcher/launcher_main.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <iostream>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/knobs.h"
#include "common/logging.h"
#include "launcher/check_build.h"
#include "launcher/options/command_line.h"
#include "launcher/elastic/elastic_discovery.h"
#include "launcher/elastic/elastic_driver.h"
#include "launcher/remote/gloo_rank_commands.h"
#include "launcher/remote/mpirun_command.h"
#include "launcher/network_check.h"
#include "launcher/options/peer_timeout.h"
#include "launcher/preflight.h"
#include "launcher/processes/rank_shim.h"
#include "launcher/remote/shell_words.h"
#include "launcher/remote/srun_command.h"
#include "launcher/processes/supervisor.h"
#include "rendezvous/client_environment.h"
#include "rendezvous/local_address.h"
#include "rendezvous/server.h"
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

// The ranks' RUNRUN_PEER_TIMEOUT in whole seconds (as forwarded, else the launcher's
// environment, else the knob's default); a value the ranks would refuse counts as the default.
int ranks_peer_timeout_s(const ForwardedEnv& forwarded, const Environment& env) {
  const std::string name(knobs::kPeerTimeout.env_name);
  std::string text;
  if (const auto found = env.find(name); found != env.end()) text = found->second;
  for (const auto& [forwarded_name, value] : forwarded.with_value) {
    if (forwarded_name == name) text = value;
  }
  const double seconds = peer_timeout_seconds(text.c_str());
  return seconds > 0 && seconds < 1 ? 1 : static_cast<int>(seconds);
}

// Runs every local check, then builds the plan. Throws InvalidArgumentError.
JobPlan plan_job(const LaunchOptions& options, const Environment& env,
                 const LocalHostNames& local) {
  check_process_count(options);
  check_command(options);
  check_duplicate_hosts(options.hosts, local);
  check_network_interfaces(options.network_interface, local_interface_names());
  std::vector<HostSlots> hosts = options.hosts;
  if (options.slurm && options.hosts_source != options.slurm->source) {
    const std::string here = local.names().empty() ? "localhost" : local.names().front();
    hosts = hosts_in_allocation(hosts, options.hosts_source, *options.slurm, here);
  }
  JobPlan plan;
  for (const auto& host : hosts_for_processes(hosts, options.num_proc)) {
    plan.host_labels.push_back(host.name);
    // In an allocation Slurm places every rank, by the names it gave the nodes.
    const bool local_name = local.is_local(host.name) && !options.slurm;
    plan.hosts.push_back({local_name ? "localhost" : host.name, host.slots});
  }
  plan.env = plan_forwarded_env(env, options.knob_values, options.extra_env);
  plan.peer_timeout_s = ranks_peer_timeout_s(plan.env, env);
  const bool local_ranks =
      std::any_of(plan.hosts.begin(), plan.hosts.end(),
                  [](const HostSlots& host) { return host.name == "localhost"; });
  if (local_ranks) check_program_found(options.command.front(), rank_path(plan.env, env));
  if (options.controller == Controller::kMpi) plan.mpirun_path = find_open_mpi_mpirun(env);
  plan.launcher_path = own_executable();
  plan.as_root = geteuid() == 0;
  return plan;
}

std::vector<std::string> remote_hosts(const JobPlan& plan) {
  std::vector<std::string> remote;
  for (const auto& host : plan.hosts) {
    if (host.name != "localhost") remote.push_back(host.name);
  }
  return remote;
}

void print_plan(const LaunchOptions& options, const JobPlan& plan, std::size_t remote) {
  std::cerr << "runrun: " << options.num_proc << " processes on " << format_host_list(plan.hosts)
            << " (" << remote << " remote host(s) reachable)\n";
  for (const auto& name : plan.env.withheld) {
    std::cerr << "runrun: not forwarding " << name << " (looks like a secret; use -x " << name
              << " to forward it)\n";
  }
}

SupervisorSettings supervisor_settings(const LaunchOptions& options, const JobPlan& plan) {
  SupervisorSettings settings;
  settings.num_proc = options.num_proc;
  for (const auto& host : plan.hosts) settings.layout.push_back(host.slots);
  settings.host_labels = plan.host_labels;
  settings.start_timeout_s = options.start_timeout_s;
  settings.output_dir = options.output_dir;
  settings.verbose = options.verbose;
  settings.rank_stdout = options.capture_rank_stdout;
  settings.timestamp_lines = options.timestamp_output;
  return settings;
}

std::string current_directory() {
  char path[PATH_MAX] = {};
  return getcwd(path, sizeof(path)) != nullptr ? path : "/";
}

// An address no packet is sent to: the route the kernel picks towards it is the default route,
// whose source address is the one a remote host most likely reaches this host at.
constexpr const char* kDefaultRouteProbe = "192.0.2.1";  // TEST-NET-1 (RFC 5737)

// The address of this host that every rank can reach: loopback for a one-host job, else the
// network the user named, else the address this host uses to reach the first remote host. An
// elastic job with a discovery script may get remote hosts later even when it starts on this
// host alone: the network the user named, else the address of the default route; loopback
// (said once, and the driver then refuses remote hosts) only when this host has no route.
std::string rendezvous_address(const LaunchOptions& options, const JobPlan& plan) {
  const auto remote = remote_hosts(plan);
  const bool may_add_remote = options.elastic.enabled && !options.elastic.discovery_script.empty();
  if (remote.empty() && !may_add_remote) return "127.0.0.1";
  if (!options.network_interface.empty()) {
    const std::string address = rendezvous::address_selected_by(options.network_interface);
    if (address.empty()) {
      throw InvalidArgumentError(RUNRUN_WHERE, "--network-interface '" + options.network_interface +
                                                   "' selects no IPv4 address of this host for "
                                                   "the ranks to reach the launcher at");
    }
    return address;
  }
  if (remote.empty()) {
    try {
      return rendezvous::address_towards(kDefaultRouteProbe);
    } catch (const InvalidArgumentError&) {
      std::cerr << "runrun: elastic: the discovery script lists only this host and this host has "
                   "no default route: the job listens on loopback, so hosts the script adds "
                   "later cannot join (give --network-interface to name the network they will "
                   "reach this host on)"
                << std::endl;
      return "127.0.0.1";
    }
  }
  try {
    return rendezvous::address_towards(remote.front());
  } catch (const InvalidArgumentError& error) {
    throw InvalidArgumentError(RUNRUN_WHERE, std::string("runrun --gloo tells the ranks an address "
                                                         "of this host to reach it at: ") +
                                                 error.what());
  }
}

// Where the job's rendezvous server reports refused connections (a wrong or missing secret,
// with the peer's address; never the secret): the launcher's stderr, as "runrun: rendezvous:
// ...". The server's thread logs while the supervisor prints: the sink writes whole lines.
Logger rendezvous_logger() {
  auto logger = std::make_shared<spdlog::logger>("runrun-rendezvous",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("runrun: %v");
  logger->set_level(spdlog::level::warn);
  logger->flush_on(spdlog::level::warn);
  return logger;
}

// The rendezvous server the launcher runs for a Gloo job (a fresh random secret), and what
// every rank gets to reach it: address, port and secret, and the network to listen on.
struct JobRendezvous {
  rendezvous::JobSecret secret;
  std::unique_ptr<rendezvous::RendezvousServer> server;
  EnvEntries entries;
};

JobRendezvous start_job_rendezvous(const LaunchOptions& options, const std::string& address) {
  rendezvous::ServerOptions server_options;
  server_options.bind_address = address;
  server_options.logger = rendezvous_logger();
  JobRendezvous job{rendezvous::JobSecret::generate(), nullptr, {}};
  job.server = std::make_unique<rendezvous::RendezvousServer>(job.secret, server_options);
  job.entries = rendezvous::rank_environment(job.server->address(), job.server->port(), job.secret);
  if (!options.network_interface.empty()) {
    job.entries.emplace_back(env::kNetworkInterface, options.network_interface);
  }
  return job;
}

// A file that is removed when this goes out of scope (srun's SLURM_HOSTFILE).
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& content) {
    char name[] = "/tmp/runrun-srun-hosts-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) {
      throw InvalidArgumentError(RUNRUN_WHERE, std::string("cannot create srun's host file in "
                                                           "/tmp: ") +
                                                   std::strerror(errno));
    }
    path_ = name;
    const bool written =
        write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
    close(fd);
    if (!written) {
      unlink(path_.c_str());
      throw InvalidArgumentError(RUNRUN_WHERE, "cannot write srun's host file " + path_);
    }
  }
  ~TemporaryFile() { unlink(path_.c_str()); }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A Gloo job in a Slurm allocation: one srun starts every rank (srun_command.h); the launcher
// serves the rendezvous and supervises srun as it does mpirun.
int run_srun_job(const LaunchOptions& options, const Environment& env, const JobPlan& plan,
                 const EnvEntries& job_entries) {
  const auto argv = build_srun_command(options, plan, find_srun(env), options.slurm->inside_step);
  if (options.dry_run) {
    std::cout << "SLURM_HOSTFILE=<" << srun_hostfile(plan).size() << " bytes: one host per rank> "
              << shell_join(argv) << std::endl;
    std::cerr << "runrun: srun copies its environment to every task: the forwarded variables "
                 "and the job's rendezvous server (its secret is never shown)\n";
    return 0;
  }
  if (!options.output_dir.empty()) make_output_dir(options.output_dir);
  const TemporaryFile hostfile(srun_hostfile(plan));
  SupervisorSettings settings = supervisor_settings(options, plan);
  settings.children.push_back({argv, -1, ""});
  settings.srun_labels = true;
  settings.extra_env.push_back("SLURM_HOSTFILE=" + hostfile.path());
  for (const auto& [name, value] : gloo_rank_environment(plan, env, job_entries)) {
    settings.extra_env.push_back(name + "=" + value);
  }
  if (options.verbose) std::cerr << "runrun: running " << shell_join(argv) << std::endl;
  return supervise(settings);
}

// runrun --gloo: the launcher runs the job's rendezvous server and starts every rank itself
// (through srun in a Slurm allocation).
int run_gloo_job(const LaunchOptions& options, const Environment& env) {
  const LocalHostNames local = LocalHostNames::detect();
  const JobPlan plan = plan_job(options, env, local);
  if (options.slurm) {
    const JobRendezvous job = start_job_rendezvous(
        options, options.dry_run ? "127.0.0.1" : rendezvous_address(options, plan));
    return run_srun_job(options, env, plan, job.entries);
  }
  const std::string cwd = current_directory();
  std::vector<std::vector<std::string>> commands;
  for (int rank = 0; rank < options.num_proc; ++rank) {
    commands.push_back(build_gloo_rank_command(options, plan, rank, cwd));
  }
  if (options.dry_run) {
    for (const auto& argv : commands) std::cout << shell_join(argv) << "\n";
    std::cout.flush();
    std::cerr << "runrun: each rank gets its environment on its stdin (the forwarded variables "
                 "and the job's rendezvous server; its secret is never shown)\n";
    return 0;
  }
  if (!options.output_dir.empty()) make_output_dir(options.output_dir);
  const auto remote = remote_hosts(plan);
  check_remote_hosts(remote, options, kSshConnectTimeoutS);
  if (options.verbose) print_plan(options, plan, remote.size());
  const JobRendezvous job = start_job_rendezvous(options, rendezvous_address(options, plan));
  const rendezvous::RendezvousServer& server = *job.server;
  const std::string block = encode_environment_block(gloo_rank_environment(plan, env, job.entries));
  if (options.elastic.enabled) {
    ElasticJobSettings elastic{options, plan, env, local, cwd, job.entries, {}, 10};
    elastic.store.host = server.address();
    elastic.store.port = server.port();
    elastic.store.secret = job.secret;
    elastic.store.who = "the launcher's elastic driver";
    elastic.loopback_only = server.address().rfind("127.", 0) == 0;
    return run_elastic_job(elastic);
  }
  SupervisorSettings settings = supervisor_settings(options, plan);
  for (int rank = 0; rank < options.num_proc; ++rank) {
    settings.children.push_back({commands[static_cast<std::size_t>(rank)], rank, block});
    if (options.verbose) {
      std::cerr << "runrun: rank " << rank << ": "
                << shell_join(commands[static_cast<std::size_t>(rank)]) << std::endl;
    }
  }
  if (options.verbose) {
    std::cerr << "runrun: rendezvous server at " << server.address() << ":" << server.port()
              << std::endl;
  }
  return supervise(settings);
}

// Neither --mpi nor --gloo: mpirun when Open MPI's is installed, else Gloo (said once).
LaunchOptions with_controller(LaunchOptions options, const Environment& env) {
  if (options.controller_given) return options;
  try {
    find_open_mpi_mpirun(env);
  } catch (const InvalidArgumentError&) {
    if (!options.mpi_args.empty()) throw;  // --mpi-args needs mpirun: say it is missing
    options.controller = Controller::kGloo;
    std::cerr << "runrun: Open MPI's mpirun is not installed: starting the ranks without MPI "
                 "(as with --gloo; --mpi to insist on mpirun)"
              << std::endl;
  }
  return options;
}

int run_mpi_job(const LaunchOptions& options, const Environment& env) {
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
  const auto remote = remote_hosts(plan);
  // In a Slurm allocation mpirun starts its daemons through Slurm, not ssh.
  if (!options.slurm) check_remote_hosts(remote, options, kSshConnectTimeoutS);
  if (options.verbose) {
    print_plan(options, plan, remote.size());
    std::cerr << "runrun: running " << shell_join(argv) << std::endl;
  }
  SupervisorSettings settings = supervisor_settings(options, plan);
  settings.children.push_back({argv, -1, ""});
  settings.extra_env = hidden;
  return supervise(settings);
}

// An elastic job with a discovery script starts on the hosts the script prints first: waits
// (within --elastic-timeout) until they have --min-np slots, and starts min(-np, slots) ranks.
LaunchOptions with_discovered_hosts(LaunchOptions options) {
  const ElasticOptions& elastic = options.elastic;
  if (!elastic.enabled || elastic.discovery_script.empty()) return options;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(elastic.elastic_timeout_s);
  for (bool said = false;; said = true) {
    options.hosts = discover_hosts(elastic.discovery_script, 10, elastic.default_slots);
    const int slots = total_slots(options.hosts);
    if (slots >= elastic.min_np) {
      options.num_proc = std::min({elastic.initial_np, slots, elastic.max_np});
      options.hosts_source = "--host-discovery-script";
      return options;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw InvalidArgumentError(RUNRUN_WHERE,
                                 "--host-discovery-script found " + std::to_string(slots) +
                                     " slots, fewer than "
                                     "--min-np " +
                                     std::to_string(elastic.min_np) + ", for --elastic-timeout " +
                                     std::to_string(elastic.elastic_timeout_s) + " s");
    }
    if (!said) {
      std::cerr << "runrun: elastic: the discovery script lists " << slots << " slots, fewer "
                << "than --min-np " << elastic.min_np << ": waiting for hosts" << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

int run_one_job(const LaunchOptions& options, const Environment& env) {
  return options.controller == Controller::kGloo ? run_gloo_job(options, env)
                                                 : run_mpi_job(options, env);
}

// Runs a job whose ranks' stdout goes to a file (the measuring jobs of network_check.h).
CapturedJobRunner captured_runner(const Environment& env) {
  return [&env](const LaunchOptions& check, std::FILE* capture) {
    LaunchOptions captured = check;
    captured.capture_rank_stdout = capture;
    return run_one_job(captured, env);
  };
}

// --profile was given (it set RUNRUN_PROFILE for the ranks).
bool profiling(const LaunchOptions& options) {
  return std::any_of(options.knob_values.begin(), options.knob_values.end(),
                     [](const auto& entry) { return entry.first == env::kProfile; });
}

// The measuring program of --check-network, installed next to this executable.
std::string network_checker_path() {
  const std::string self = own_executable();
  return self.substr(0, self.rfind('/') + 1) + "runrun-check-network";
}

int run_job(const LaunchOptions& given, const Environment& env) {
  const LaunchOptions options = with_discovered_hosts(with_controller(given, env));
  if (options.network_check.enabled && options.dry_run) {  // the measuring job's command too
    LaunchOptions check =
        network_check_job(options, network_checker_path(), options.network_check.budget_s);
    check.dry_run = true;
    const int status = run_one_job(check, env);
    if (status != 0 || options.command.empty()) return status;
  } else if (options.network_check.enabled) {
    const int status = run_network_check(options, network_checker_path(), captured_runner(env));
    if (status != 0 || options.command.empty()) return status;
  }
  if (profiling(options) && !options.dry_run) {
    LaunchOptions profiled = options;
    const double gbit = measure_link_gbit(options, network_checker_path(), captured_runner(env));
    if (gbit > 0) profiled.knob_values.emplace_back(env::kProfileLinkGbit, std::to_string(gbit));
    return run_one_job(profiled, env);
  }
  return run_one_job(options, env);
}

}  // namespace

int launcher_main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], kRankShimFlag) == 0) return run_rank_shim(argc, argv);
  const Environment env = current_environment();
  try {
    const ParsedCommandLine parsed =
        parse_command_line(std::vector<std::string>(argv + 1, argv + argc), env, std::cout);
    for (const auto& notice : parsed.notices) std::cerr << "runrun: " << notice << "\n";
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
