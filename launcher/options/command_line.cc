#include "launcher/options/command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <memory>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/horovod_env.h"
#include "common/knobs.h"
#include "common/logging.h"
#include "launcher/options/autotune_options.h"
#include "launcher/elastic/elastic_options.h"
#include "launcher/options/horovod_config_file.h"
#include "launcher/options/horovod_flags.h"
#include "launcher/options/network_check_options.h"
#include "launcher/options/network_interfaces.h"
#include "launcher/options/option_spelling.h"
#include "launcher/options/profile_options.h"
#include "launcher/options/raw_options.h"
#include "launcher/remote/shell_words.h"
#include "runrun/build_config.h"

namespace runrun::launcher {
namespace {

constexpr const char* kExamples = R"(
Examples:
  runrun -np 4 python train.py                     4 processes on this machine
  runrun --check-network -H a:4,b:4               latency and bandwidth of every host pair
  runrun -np 8 -H server1:4,server2:4 python train.py
  runrun -np 8 --hostfile hosts.txt python train.py       (lines: 'server1 slots=4')
  runrun -np 2 -x NCCL_DEBUG=INFO --network-interface eth0 -H a:1,b:1 ./bench
  runrun --dry-run -np 4 -H a:2,b:2 python train.py      print the mpirun command only
  runrun python train.py            in salloc/sbatch: every task of the Slurm allocation
  runrun --check-build

Everything after the options (or after '--') is the command, passed on untouched.
Exit status: 0 when every rank exited 0; 2 for a usage or preflight error (nothing started);
otherwise the failed rank's exit code (128+N for signal N). See docs/launcher.md.)";

[[noreturn]] void invalid(const std::string& message) {
  throw InvalidArgumentError(RUNRUN_WHERE, message);
}

// "0", "0,1", ...: non-negative integers separated by single commas.
bool is_cpu_list(const std::string& text) {
  bool digit_before = false;
  for (char c : text) {
    if (c == ',' && digit_before) {
      digit_before = false;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      digit_before = true;
    } else {
      return false;
    }
  }
  return digit_before;
}

// CLI11's parse error in the launcher's words where CLI11's own are unclear: an option that
// takes one value given twice reads "--num-proc: At Most 1 required but received 2".
std::string usage_message(const std::string& cli11_message) {
  const std::string marker = ": At Most 1 required but received ";
  const size_t at = cli11_message.find(marker);
  if (at == std::string::npos) return cli11_message;
  std::string option = cli11_message.substr(0, at);
  if (option == "--num-proc") option = "-np/--num-proc";
  return option + " was given " + cli11_message.substr(at + marker.size()) + " times; give it once";
}

// Validates a number given as text; returns it unchanged (the text the user wrote).
std::string number_at_least(const std::string& text, const char* option, double minimum,
                            bool integer) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const bool is_integer = text.find_first_not_of("0123456789") == std::string::npos;
  if (text.empty() || ec != std::errc() || ptr != end || (integer && !is_integer) ||
      value < minimum) {
    invalid(std::string(option) + " must be " + (integer ? "an integer" : "a number") +
            " >= " + std::to_string(static_cast<long long>(minimum)) + ", got '" + text + "'");
  }
  return text;
}

std::vector<std::pair<std::string, std::string>> knob_values(const RawOptions& raw) {
  std::vector<std::pair<std::string, std::string>> values;
  const auto set = [&](const Knob& knob, const std::string& value) {
    values.emplace_back(std::string(knob.env_name), value);
  };
  if (!raw.log_level.empty()) {
    // runrun's names and Horovod's (WARNING, FATAL), in any case, as HOROVOD_LOG_LEVEL reads.
    const std::string level = horovod_log_level(raw.log_level);
    try {
      parse_log_level(level);  // the runtime's own check of the name
    } catch (const InvalidArgumentError&) {
      invalid("--log-level '" + raw.log_level +
              "' is not a level: use trace, debug, info, warn (warning), error, critical "
              "(fatal) or off");
    }
    set(knobs::kLogLevel, level);
  }
  if (!raw.cycle_time_ms.empty()) {
    set(knobs::kCycleTimeMs, number_at_least(raw.cycle_time_ms, "--cycle-time-ms", 0, false));
  }
  if (!raw.fusion_threshold_mb.empty()) {
    const auto mb = number_at_least(raw.fusion_threshold_mb, "--fusion-threshold-mb", 0, true);
    if (mb.size() > 9) invalid("--fusion-threshold-mb " + mb + " is too large");
    set(knobs::kFusionThreshold, std::to_string(std::stoll(mb) * 1024 * 1024));
  }
  if (!raw.cache_capacity.empty()) {
    set(knobs::kCacheCapacity, number_at_least(raw.cache_capacity, "--cache-capacity", 0, true));
  }
  if (!raw.timeline_filename.empty()) set(knobs::kTimeline, raw.timeline_filename);
  if (raw.hierarchical_allreduce && raw.no_hierarchical_allreduce) {
    invalid("--hierarchical-allreduce and --no-hierarchical-allreduce both given: use one");
  }
  if (raw.hierarchical_allreduce) set(knobs::kHierarchicalAllreduce, "1");
  if (raw.no_hierarchical_allreduce) set(knobs::kHierarchicalAllreduce, "0");
  if (!raw.hierarchical_allreduce_cross.empty()) {
    if (raw.hierarchical_allreduce_cross != "nccl" &&
        raw.hierarchical_allreduce_cross != "staging") {
      invalid("--hierarchical-allreduce-cross '" + raw.hierarchical_allreduce_cross +
              "' is not a choice: use nccl (the stage across hosts over NCCL) or staging "
              "(through host memory over MPI/Gloo)");
    }
    set(knobs::kHierarchicalAllreduceCross, raw.hierarchical_allreduce_cross);
  }
  if (!raw.thread_affinity.empty()) {
    if (!is_cpu_list(raw.thread_affinity)) {
      invalid("--thread-affinity '" + raw.thread_affinity +
              "' is not a list of CPU ids: give one non-negative integer per local rank, "
              "separated by commas (e.g. 0,1)");
    }
    set(knobs::kThreadAffinity, raw.thread_affinity);
  }
  for (auto& variable : autotune_variables(raw.autotune)) values.push_back(std::move(variable));
  if (raw.no_stall_check && raw.stall_check) {
    invalid("--no-stall-check and --stall-check both given: use one");
  }
  // Horovod's disabled stall check neither warns nor shuts down, whatever the times say.
  std::string stall_warning = raw.stall_warning_s, stall_shutdown = raw.stall_shutdown_s;
  if (!stall_warning.empty()) {
    number_at_least(stall_warning, "--stall-check-warning-time-seconds", 0, true);
  }
  if (!stall_shutdown.empty()) {
    number_at_least(stall_shutdown, "--stall-check-shutdown-time-seconds", 0, true);
  }
  if (raw.no_stall_check) stall_warning = stall_shutdown = "0";
  if (!stall_warning.empty()) set(knobs::kStallCheckTime, stall_warning);
  if (!stall_shutdown.empty()) set(knobs::kStallShutdownTime, stall_shutdown);
  return values;
}

void check_extra_env(const std::vector<std::string>& entries) {
  for (const auto& entry : entries) {
    const std::string name = entry.substr(0, entry.find('='));
    const bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                       std::all_of(name.begin(), name.end(),
                                   [](unsigned char c) { return std::isalnum(c) || c == '_'; });
    if (!valid) {
      invalid("-x '" + entry + "' is not VAR or VAR=value with VAR made of letters, digits, _");
    }
  }
}

// horovodrun's flags (launcher/options/horovod_flags.h) into `options`; notices for those ignored.
void apply_horovod_flags(const RawOptions& raw, LaunchOptions& options,
                         std::vector<std::string>& notices) {
  HorovodFlagEffects effects = horovod_flag_effects(raw.horovod);
  if (raw.gloo && !effects.mpirun_words.empty()) {
    invalid("--binding-args are mpirun's, which --gloo does not run: drop one of them");
  }
  options.mpi_args.insert(options.mpi_args.begin(), effects.mpirun_words.begin(),
                          effects.mpirun_words.end());
  for (auto& variable : effects.rank_variables) options.knob_values.push_back(std::move(variable));
  options.timestamp_output = effects.timestamp_output;
  for (auto& notice : effects.notices) notices.push_back(std::move(notice));
  for (auto& notice : autotune_notices(raw.autotune)) notices.push_back(std::move(notice));
  if (raw.slots_per_host < 0) {
    invalid("--slots-per-host must be at least 1, got " + std::to_string(raw.slots_per_host));
  }
  if (raw.slots_per_host != 0 && raw.discovery_script.empty()) {
    notices.push_back(
        "--slots-per-host ignored: it gives the slots of a host that "
        "--host-discovery-script prints without ':N' (with -H or --hostfile "
        "write host:N)");
  }
}

// Elastic training (--min-np, --max-np or --host-discovery-script given) into `options`.
void apply_elastic_flags(const RawOptions& raw, const Environment& env, LaunchOptions& options) {
  if (raw.discovery_script.empty() && raw.min_np == 0 && raw.max_np == 0) return;
  if (raw.mpi)
    invalid(
        "elastic training (--min-np, --max-np, --host-discovery-script) runs "
        "over Gloo only, as Horovod's: drop --mpi");
  if (!raw.discovery_script.empty() && (!raw.hosts.empty() || !raw.hostfile.empty())) {
    invalid("--host-discovery-script gives the hosts: drop " +
            std::string(raw.hosts.empty() ? "--hostfile" : "-H"));
  }
  options.controller = Controller::kGloo;
  options.controller_given = true;
  const bool hosts_given = !raw.hosts.empty() || !raw.hostfile.empty();
  const int elastic_timeout_s =
      raw.elastic_timeout_given
          ? raw.elastic_timeout_s
          : timeout_from_environment(env, env::kElasticTimeout, "HOROVOD_ELASTIC_TIMEOUT",
                                     raw.elastic_timeout_s, "--elastic-timeout");
  options.elastic = validate_elastic(raw.num_proc, raw.min_np, raw.max_np, raw.discovery_script,
                                     elastic_timeout_s, raw.reset_limit,
                                     !raw.discovery_script.empty() ? 0
                                     : hosts_given                 ? total_slots(options.hosts)
                                     : raw.max_np != 0 ? raw.max_np
                                                       : std::max(raw.num_proc, raw.min_np));
  apply_cooldown_range(raw.cooldown_range, options.elastic);
  options.elastic.keep_failed_hosts = raw.keep_failed_hosts;
  if (raw.slots_per_host > 0) options.elastic.default_slots = raw.slots_per_host;
  options.num_proc = options.elastic.initial_np;
  if (!hosts_given && raw.discovery_script.empty()) {
    options.hosts = {{"localhost", options.elastic.max_np}};  // this machine, max-np slots
  }
}

// The hosts: -H, --hostfile, the cluster's (Slurm, MPI Operator) or this machine; and, from a
// cluster, the default number of processes.
void choose_hosts(const RawOptions& raw, const Environment& env, LaunchOptions& options,
                  std::vector<std::string>& notices) {
  if (!raw.hosts.empty()) {
    options.hosts = parse_host_list(raw.hosts);
    options.hosts_source = "-H " + raw.hosts;
  } else if (!raw.hostfile.empty()) {
    options.hosts = read_hostfile(raw.hostfile);
    options.hosts_source = "--hostfile " + raw.hostfile;
  } else if (auto cluster = options.slurm ? options.slurm : mpi_operator_hosts(env)) {
    options.hosts = cluster->hosts;
    options.hosts_source = cluster->source;
    if (options.num_proc == 0)
      options.num_proc = cluster->default_np > 0 ? cluster->default_np : total_slots(options.hosts);
    if (options.num_proc >= 1 && options.num_proc <= total_slots(options.hosts)) {
      notices.push_back(cluster_hosts_notice(*cluster, options.num_proc));
    }  // else the preflight says what is wrong, naming both
  } else {
    options.hosts = {{"localhost", raw.num_proc > 0 ? raw.num_proc : 1}};
    options.hosts_source = "the default localhost:" + std::to_string(raw.num_proc);
  }
}

// ssh's port, key and agent; what every rank gets (-x, output files); the start timeout.
void apply_remote_options(const RawOptions& raw, const Environment& env, LaunchOptions& options) {
  if (raw.ssh_port != 0) {
    if (raw.ssh_port < 1 || raw.ssh_port > 65535) {
      invalid("-p/--ssh-port must be a port between 1 and 65535, got " +
              std::to_string(raw.ssh_port));
    }
    options.ssh_port = raw.ssh_port;
  }
  options.ssh_identity_file = raw.ssh_identity_file;
  options.rsh_agent = raw.rsh_agent;
  if (options.rsh_agent.empty() && env.count(kRshAgentEnv) != 0) {
    options.rsh_agent = env.at(kRshAgentEnv);
  }
  check_extra_env(raw.extra_env);
  options.extra_env = raw.extra_env;
  options.output_dir = raw.output_dir;
  options.verbose = raw.verbose;
  if (raw.start_timeout_s < 1) {
    invalid("--start-timeout must be at least 1 second, got " +
            std::to_string(raw.start_timeout_s));
  }
  options.start_timeout_s =
      raw.start_timeout_given
          ? raw.start_timeout_s
          : timeout_from_environment(env, kStartTimeoutEnv, "HOROVOD_START_TIMEOUT",
                                     raw.start_timeout_s, "--start-timeout");
}

// The knobs the ranks get as variables: the runtime's, --profile's, horovodrun's flags, and
// NCCL's interfaces.
void apply_knobs(const RawOptions& raw, LaunchOptions& options, std::vector<std::string>& notices) {
  options.knob_values = knob_values(raw);
  for (auto& variable : profile_variables(raw.profile)) {
    options.knob_values.push_back(std::move(variable));
  }
  apply_horovod_flags(raw, options, notices);
  if (const std::string names = interface_names(options.network_interface); !names.empty()) {
    // As horovodrun: NCCL's own sockets (bootstrap, and data without InfiniBand) use them too.
    options.knob_values.emplace_back("NCCL_SOCKET_IFNAME", names);
  }
}

// The user's command, without a leading "--"; an unknown option before it is refused.
std::vector<std::string> user_command(std::vector<std::string> command) {
  if (!command.empty() && command.front() == "--") {
    command.erase(command.begin());
  } else if (!command.empty() && command.front().size() > 1 && command.front()[0] == '-') {
    invalid("unknown option '" + command.front() +
            "' (see runrun --help); a command that starts with '-' goes after '--'");
  }
  return command;
}

LaunchOptions validate(const RawOptions& raw, std::vector<std::string> command,
                       const Environment& env, std::vector<std::string>& notices) {
  const bool elastic = !raw.discovery_script.empty() || raw.min_np != 0 || raw.max_np != 0;
  if (raw.gloo && raw.mpi) invalid("--gloo and --mpi both given: use one of them");
  if (raw.gloo && !raw.mpi_args.empty()) {
    invalid("--mpi-args passes arguments to mpirun, which --gloo does not run: drop one of them");
  }
  if (!raw.hosts.empty() && !raw.hostfile.empty()) {
    invalid("-H/--hosts and --hostfile both given: use one of them");
  }
  LaunchOptions options;
  options.num_proc = raw.num_proc;
  // Elastic jobs take their hosts from the discovery script or -H, over ssh, as before.
  if (!elastic) options.slurm = slurm_allocation(env, !raw.hosts.empty() || !raw.hostfile.empty());
  options.controller = raw.gloo ? Controller::kGloo : Controller::kMpi;
  options.controller_given = raw.gloo || raw.mpi;
  choose_hosts(raw, env, options, notices);
  apply_remote_options(raw, env, options);
  options.network_interface = join_interfaces(raw.network_interfaces);
  options.mpi_args = split_shell_words(raw.mpi_args, "--mpi-args");
  apply_knobs(raw, options, notices);
  options.dry_run = raw.dry_run;
  options.command = user_command(std::move(command));
  if ((!raw.cooldown_range.empty() || raw.keep_failed_hosts) && !elastic) {
    invalid(std::string(raw.keep_failed_hosts ? "--keep-failed-hosts"
                                              : "--blacklist-cooldown-"
                                                "range") +
            " is for elastic jobs: give --min-np or --host-discovery-script too");
  }
  options.network_check = validate_network_check(raw.network_check);
  apply_elastic_flags(raw, env, options);
  return options;
}

// One CLI11 app with the options it fills (CLI11 binds them by reference: they live together).
struct Parser {
  CLI::App app{"runrun: start a data-parallel job on one or more hosts (Open MPI underneath)",
               "runrun"};
  RawOptions raw;

  Parser() {
    app.footer(kExamples);
    app.prefix_command();
    add_options(app, raw);
  }

  // False when --help was asked for. Throws InvalidArgumentError for a malformed command line.
  bool parse(const std::vector<std::string>& args) {
    std::vector<std::string> reversed = normalize_option_spellings(args, app);
    std::reverse(reversed.begin(), reversed.end());  // CLI11 takes the arguments reversed
    try {
      app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
      return false;
    } catch (const CLI::ParseError& error) {
      invalid(usage_message(error.what()) + " (see runrun --help)");
    }
    raw.start_timeout_given = app.count("--start-timeout") > 0;
    raw.elastic_timeout_given = app.count("--elastic-timeout") > 0;
    return true;
  }
};

}  // namespace

ParsedCommandLine parse_command_line(const std::vector<std::string>& args, const Environment& env,
                                     std::ostream& out) {
  ParsedCommandLine parsed;
  auto parser = std::make_unique<Parser>();
  if (!parser->parse(args)) {
    out << parser->app.help();
    parsed.action = ParsedCommandLine::Action::kExit;
    return parsed;
  }
  if (!parser->raw.config_file.empty()) {
    // horovodrun's YAML settings, as the flags of the same meaning, where the command line does
    // not give them: parse again with those flags first.
    const CLI::App& given_app = parser->app;
    const ConfigFileFlags config = horovod_config_flags(
        parser->raw.config_file,
        [&given_app](std::string_view flag) { return given_app.count(std::string(flag)) > 0; });
    parsed.notices = config.notices;
    std::vector<std::string> combined = config.words;
    combined.insert(combined.end(), args.begin(), args.end());
    parser = std::make_unique<Parser>();
    parser->parse(combined);
  }
  const RawOptions& raw = parser->raw;
  if (raw.version) {
    out << "runrun " << RUNRUN_VERSION << "\n";
    parsed.action = ParsedCommandLine::Action::kExit;
    return parsed;
  }
  if (raw.check_build) {
    parsed.action = ParsedCommandLine::Action::kCheckBuild;
    return parsed;
  }
  parsed.options = validate(raw, parser->app.remaining(), env, parsed.notices);
  return parsed;
}

}  // namespace runrun::launcher
