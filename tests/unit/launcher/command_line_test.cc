#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "common/knobs.h"
#include "launcher/options/command_line.h"

using namespace runrun::launcher;
using Args = std::vector<std::string>;

namespace {

LaunchOptions parse(const Args& args, const Environment& env = {}) {
  std::ostringstream out;
  const auto parsed = parse_command_line(args, env, out);
  REQUIRE(parsed.action == ParsedCommandLine::Action::kRun);
  return parsed.options;
}

std::string error_of(const Args& args) {
  std::ostringstream out;
  try {
    parse_command_line(args, {}, out);
  } catch (const runrun::InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

std::string knob(const LaunchOptions& options, const runrun::Knob& which) {
  for (const auto& [name, value] : options.knob_values) {
    if (name == which.env_name) return value;
  }
  return "<unset>";
}

}  // namespace

TEST_CASE("option -np and the command after the options stay untouched") {
  const auto options = parse({"-np", "2", "python", "-c", "print(1)", "-np", "3", "--verbose"});
  CHECK(options.num_proc == 2);
  CHECK(options.command == Args{"python", "-c", "print(1)", "-np", "3", "--verbose"});
  CHECK_FALSE(options.verbose);
  CHECK(options.hosts == std::vector<HostSlots>{{"localhost", 2}});
  CHECK(options.controller == Controller::kMpi);
  CHECK_FALSE(options.controller_given);  // mpirun when installed, else gloo
  CHECK(options.start_timeout_s == 30);
  CHECK(parse({"--gloo", "-np", "2", "x"}).controller == Controller::kGloo);
  CHECK(parse({"--gloo", "-np", "2", "x"}).controller_given);
  CHECK(parse({"--mpi", "-np", "2", "x"}).controller_given);
}

TEST_CASE("option -- separates the options from the command") {
  CHECK(parse({"--num-proc", "2", "--", "--weird-program", "-x"}).command ==
        Args{"--weird-program", "-x"});
  CHECK(parse({"-np", "1", "--", "--"}).command == Args{"--"});
}

TEST_CASE("option -np among option values is rewritten, inside the command it is not") {
  const auto options = parse({"--verbose", "-x", "A=1", "-np", "4", "mpicmd", "-np", "3"});
  CHECK(options.num_proc == 4);
  CHECK(options.verbose);
  CHECK(options.command == Args{"mpicmd", "-np", "3"});
}

TEST_CASE("an option given twice is named, with what to do") {
  CHECK(error_of({"-np", "2", "-H", "localhost:2", "-np", "3", "true"})
            .find("-np/--num-proc was given 2 times; give it once (see runrun --help)") !=
        std::string::npos);
  CHECK(error_of({"-np", "2", "--start-timeout", "3", "--start-timeout", "4", "true"})
            .find("--start-timeout was given 2 times; give it once") != std::string::npos);
}

TEST_CASE("hosts from -H and from --hostfile") {
  CHECK(parse({"-np", "4", "-H", "a:2,b:2", "x"}).hosts ==
        std::vector<HostSlots>{{"a", 2}, {"b", 2}});
  CHECK(parse({"-np", "4", "--hosts", "a:4", "x"}).hosts_source == "-H a:4");
  const std::string path = "command_line_test_hosts.txt";
  std::ofstream(path) << "a slots=2\nb:2\n";
  const auto options = parse({"-np", "4", "--hostfile", path, "x"});
  std::remove(path.c_str());
  CHECK(options.hosts == std::vector<HostSlots>{{"a", 2}, {"b", 2}});
  CHECK(options.hosts_source == "--hostfile " + path);
}

TEST_CASE("ssh, agent, env, output, interface and mpirun options") {
  const auto options = parse({"-np",
                              "2",
                              "-p",
                              "2222",
                              "-i",
                              "/k/id",
                              "--rsh-agent",
                              "my-agent",
                              "--mpi",
                              "-x",
                              "A",
                              "-x",
                              "B=2",
                              "--output-filename",
                              "/tmp/out",
                              "--verbose",
                              "--start-timeout",
                              "7",
                              "--network-interface",
                              "eth1",
                              "--mpi-args",
                              "--mca btl self,tcp",
                              "--dry-run",
                              "prog"});
  CHECK(options.ssh_port == 2222);
  CHECK(options.ssh_identity_file == "/k/id");
  CHECK(options.rsh_agent == "my-agent");
  CHECK(options.extra_env == Args{"A", "B=2"});
  CHECK(options.output_dir == "/tmp/out");
  CHECK(options.verbose);
  CHECK(options.start_timeout_s == 7);
  CHECK(options.network_interface == "eth1");
  CHECK(options.mpi_args == Args{"--mca", "btl", "self,tcp"});
  CHECK(options.dry_run);
  CHECK(parse({"-np", "1", "--ssh-port", "22", "--ssh-identity-file", "k", "x"}).ssh_port == 22);
}

TEST_CASE("the remote shell agent defaults to RUNRUN_RSH_AGENT") {
  CHECK(parse({"-np", "1", "x"}, {{"RUNRUN_RSH_AGENT", "agent.sh"}}).rsh_agent == "agent.sh");
  CHECK(parse({"-np", "1", "--rsh-agent", "b", "x"}, {{"RUNRUN_RSH_AGENT", "a"}}).rsh_agent == "b");
  CHECK(parse({"-np", "1", "x"}).rsh_agent.empty());
}

TEST_CASE("tunables map to their RUNRUN_* knobs") {
  namespace k = runrun::knobs;
  const auto options = parse({"-np", "1", "--fusion-threshold-mb", "32", "--cycle-time-ms", "2.5",
                              "--cache-capacity", "0", "--timeline-filename", "/tmp/t.json",
                              "--log-level", "DEBUG", "--stall-check-warning-time-seconds", "30",
                              "--stall-check-shutdown-time-seconds", "120", "x"});
  CHECK(knob(options, k::kFusionThreshold) == "33554432");
  CHECK(knob(options, k::kCycleTimeMs) == "2.5");
  CHECK(knob(options, k::kCacheCapacity) == "0");
  CHECK(knob(options, k::kTimeline) == "/tmp/t.json");
  CHECK(knob(options, k::kLogLevel) == "debug");
  CHECK(knob(options, k::kStallCheckTime) == "30");
  CHECK(knob(options, k::kStallShutdownTime) == "120");
  CHECK(options.knob_values.size() == 7);
  CHECK(parse({"-np", "1", "x"}).knob_values.empty());
  CHECK(knob(parse({"-np", "2", "--thread-affinity", "0,11", "x"}), k::kThreadAffinity) == "0,11");
  CHECK(knob(parse({"-np", "4", "--hierarchical-allreduce-cross", "staging", "x"}),
             k::kHierarchicalAllreduceCross) == "staging");
}

TEST_CASE("autotune flags map to their RUNRUN_AUTOTUNE* knobs") {
  namespace k = runrun::knobs;
  const auto options =
      parse({"-np", "2", "--autotune", "--autotune-log-file", "/tmp/at.csv",
             "--autotune-warmup-samples", "0", "--autotune-steps-per-sample", "5", "x"});
  CHECK(knob(options, k::kAutotune) == "1");
  CHECK(knob(options, k::kAutotuneLog) == "/tmp/at.csv");
  CHECK(knob(options, k::kAutotuneWarmupSamples) == "0");
  CHECK(knob(options, k::kAutotuneStepsPerSample) == "5");
  CHECK(options.knob_values.size() == 4);
  CHECK(knob(parse({"-np", "2", "--autotune", "x"}), k::kAutotune) == "1");
  const auto implied = parse({"-np", "2", "--autotune-log-file", "f.csv", "x"});
  CHECK(knob(implied, k::kAutotune) == "1");
  CHECK(knob(implied, k::kAutotuneLog) == "f.csv");
  CHECK(parse({"-np", "2", "x"}).knob_values.empty());
  CHECK_THAT(error_of({"-np", "2", "--autotune", "--autotune-steps-per-sample", "0", "x"}),
             Catch::Contains("--autotune-steps-per-sample") && Catch::Contains("'0'"));
  CHECK_THAT(error_of({"-np", "2", "--autotune", "--autotune-warmup-samples", "-1", "x"}),
             Catch::Contains("--autotune-warmup-samples"));
}

TEST_CASE("option --help, --version and --check-build end without running") {
  std::ostringstream out;
  auto parsed = parse_command_line({"--help"}, {}, out);
  CHECK(parsed.action == ParsedCommandLine::Action::kExit);
  CHECK(parsed.exit_code == 0);
  CHECK_THAT(out.str(), Catch::Contains("--num-proc") && Catch::Contains("Examples:") &&
                            Catch::Contains("--hostfile") && Catch::Contains("--check-build"));
  out.str("");
  parsed = parse_command_line({"--version"}, {}, out);
  CHECK(parsed.action == ParsedCommandLine::Action::kExit);
  CHECK_THAT(out.str(), Catch::StartsWith("runrun "));
  parsed = parse_command_line({"--check-build"}, {}, out);
  CHECK(parsed.action == ParsedCommandLine::Action::kCheckBuild);
}

TEST_CASE("every command-line error names the option and the value") {
  CHECK_THAT(error_of({"--gloo", "--mpi", "-np", "2", "x"}),
             Catch::Contains("--gloo and --mpi both given"));
  CHECK_THAT(error_of({"--gloo", "--mpi-args", "-v", "-np", "2", "x"}),
             Catch::Contains("--mpi-args") && Catch::Contains("--gloo does not run"));
  CHECK_THAT(error_of({"-np", "2", "-H", "a:2", "--hostfile", "f", "x"}),
             Catch::Contains("both given"));
  CHECK_THAT(error_of({"-np", "two", "x"}), Catch::Contains("two"));
  CHECK_THAT(error_of({"-np"}), Catch::Contains("num-proc"));
  CHECK_THAT(error_of({"--no-such-option", "x"}),
             Catch::Contains("unknown option '--no-such-option'"));
  CHECK_THAT(error_of({"-np", "2", "-q", "x"}), Catch::Contains("unknown option '-q'"));
  CHECK_THAT(error_of({"-np", "2", "-H", "a:zero", "x"}), Catch::Contains("'a:zero'"));
  CHECK_THAT(error_of({"-np", "2", "--hostfile", "/nonexistent/h", "x"}),
             Catch::Contains("cannot read hostfile '/nonexistent/h'"));
  CHECK_THAT(error_of({"-np", "2", "-p", "70000", "x"}), Catch::Contains("70000"));
  CHECK_THAT(error_of({"-np", "2", "-x", "1BAD=2", "x"}), Catch::Contains("'1BAD=2'"));
  CHECK_THAT(error_of({"-np", "2", "-x", "=2", "x"}), Catch::Contains("'=2'"));
  CHECK_THAT(error_of({"-np", "2", "--start-timeout", "0", "x"}),
             Catch::Contains("--start-timeout") && Catch::Contains("got 0"));
  CHECK_THAT(error_of({"-np", "2", "--mpi-args", "'open", "x"}), Catch::Contains("unterminated"));
  CHECK_THAT(error_of({"-np", "2", "--fusion-threshold-mb", "-1", "x"}),
             Catch::Contains("--fusion-threshold-mb") && Catch::Contains("'-1'"));
  CHECK_THAT(error_of({"-np", "2", "--fusion-threshold-mb", "1.5", "x"}),
             Catch::Contains("an integer"));
  CHECK_THAT(error_of({"-np", "2", "--fusion-threshold-mb", "99999999999", "x"}),
             Catch::Contains("too large"));
  CHECK_THAT(error_of({"-np", "2", "--cycle-time-ms", "fast", "x"}), Catch::Contains("'fast'"));
  CHECK_THAT(error_of({"-np", "2", "--cache-capacity", "-3", "x"}),
             Catch::Contains("--cache-capacity"));
  CHECK_THAT(error_of({"-np", "2", "--log-level", "loud", "x"}), Catch::Contains("'loud'"));
  for (const char* cpus : {"0,", ",1", "0,,1", "a", "-1", "0 1", "1;id"}) {
    CHECK_THAT(error_of({"-np", "2", "--thread-affinity", cpus, "x"}),
               Catch::Contains("--thread-affinity '" + std::string(cpus) + "'") &&
                   Catch::Contains("one non-negative integer per local rank"));
  }
  CHECK_THAT(error_of({"-np", "2", "--hierarchical-allreduce-cross", "mpi", "x"}),
             Catch::Contains("--hierarchical-allreduce-cross 'mpi'") && Catch::Contains("nccl") &&
                 Catch::Contains("staging"));
  CHECK_THAT(error_of({"-np", "2", "--stall-check-warning-time-seconds", "x1", "x"}),
             Catch::Contains("--stall-check-warning-time-seconds"));
  CHECK_THAT(error_of({"-np", "2", "--stall-check-shutdown-time-seconds", "-5", "x"}),
             Catch::Contains("--stall-check-shutdown-time-seconds"));
}

TEST_CASE("horovodrun's single-dash names: -hostfile, -cb, -v, -np=N") {
  const std::string path = "command_line_test_single_dash_hosts.txt";
  std::ofstream(path) << "a slots=2\n";
  const auto options = parse({"-np", "2", "-hostfile", path, "python", "train.py"});
  const auto with_equals = parse({"-np=2", "-hostfile=" + path, "x"});
  std::remove(path.c_str());
  CHECK(options.hosts == std::vector<HostSlots>{{"a", 2}});
  CHECK(options.command == Args{"python", "train.py"});
  CHECK(with_equals.num_proc == 2);
  CHECK(with_equals.hosts == std::vector<HostSlots>{{"a", 2}});
  std::ostringstream out;
  CHECK(parse_command_line({"-cb"}, {}, out).action == ParsedCommandLine::Action::kCheckBuild);
  CHECK(parse_command_line({"-v"}, {}, out).action == ParsedCommandLine::Action::kExit);
  CHECK_THAT(out.str(), Catch::StartsWith("runrun "));
  // A short option with its value attached, as argparse reads it.
  CHECK(parse({"-np", "2", "-Ha:2", "-p2222", "-xA=1", "x"}).hosts ==
        std::vector<HostSlots>{{"a", 2}});
  // The command's own words are never rewritten.
  CHECK(parse({"-np", "1", "prog", "-hostfile", "-cb"}).command ==
        Args{"prog", "-hostfile", "-cb"});
}

TEST_CASE("an unknown single-dash word is an error, never help or a cluster of short options") {
  for (const char* word :
       {"-hostfilex", "-hosts", "-help", "-hx", "-verbose", "-npx", "-vx", "-cbx", "-dry-run"}) {
    std::ostringstream out;
    CHECK_THAT(error_of({"-np", "2", word, "f", "python", "train.py"}),
               Catch::Contains("unknown option '" + std::string(word) + "'") &&
                   Catch::Contains("goes after '--'"));
  }
  // Before -np too: nothing is parsed ahead of the error (no help printed, no exit 0).
  std::ostringstream out;
  CHECK_THROWS_AS(parse_command_line({"-hostfilex", "h", "-np", "2", "x"}, {}, out),
                  runrun::InvalidArgumentError);
  CHECK(out.str().empty());
  CHECK(parse({"-np", "1", "--", "-hostfilex"}).command == Args{"-hostfilex"});
  CHECK_THAT(error_of({"-np", "2", "-q", "x"}), Catch::Contains("unknown option '-q'"));
}

TEST_CASE("a long option may be abbreviated while the abbreviation is unambiguous, as argparse") {
  const auto options = parse({"--num-p", "2", "--verb", "--start-time=5", "x"});
  CHECK(options.num_proc == 2);
  CHECK(options.verbose);
  CHECK(options.start_timeout_s == 5);
  CHECK_THAT(error_of({"-np", "2", "--check", "x"}),
             Catch::Contains("option '--check' is ambiguous: it could be --check-build") &&
                 Catch::Contains("--check-network"));
  // An exact name wins over a longer one it begins.
  CHECK(parse({"-np", "2", "--hierarchical-allreduce", "x"}).knob_values.size() == 1);
}

TEST_CASE("the option --log-level takes Horovod's names in any case, as HOROVOD_LOG_LEVEL") {
  namespace k = runrun::knobs;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"TRACE", "trace"},  {"DEBUG", "debug"},       {"INFO", "info"},      {"WARNING", "warn"},
      {"warning", "warn"}, {"ERROR", "error"},       {"FATAL", "critical"}, {"Fatal", "critical"},
      {"warn", "warn"},    {"critical", "critical"}, {"OFF", "off"}};
  for (const auto& [given, level] : cases) {
    CHECK(knob(parse({"-np", "1", "--log-level", given, "x"}), k::kLogLevel) == level);
  }
  CHECK_THAT(error_of({"-np", "1", "--log-level", "VERBOSE", "x"}),
             Catch::Contains("--log-level 'VERBOSE' is not a level") &&
                 Catch::Contains("warn (warning)") && Catch::Contains("critical (fatal)"));
}

namespace {

ParsedCommandLine parse_all(const Args& args) {
  std::ostringstream out;
  return parse_command_line(args, {}, out);
}

bool has_notice(const ParsedCommandLine& parsed, const std::string& start) {
  for (const auto& notice : parsed.notices) {
    if (notice.rfind(start, 0) == 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("horovodrun's flags of runrun features map to runrun's variables and options") {
  namespace k = runrun::knobs;
  auto parsed = parse_all({"-np", "2", "--no-hierarchical-allreduce", "--no-stall-check", "--tcp",
                           "--gloo-timeout-seconds", "45", "--no-autotune",
                           "--prefix-output-with-timestamp", "x"});
  CHECK(parsed.notices.empty());
  CHECK(knob(parsed.options, k::kHierarchicalAllreduce) == "0");
  CHECK(knob(parsed.options, k::kStallCheckTime) == "0");
  CHECK(knob(parsed.options, k::kStallShutdownTime) == "0");
  CHECK(knob(parsed.options, k::kAutotune) == "0");
  CHECK(knob(parsed.options, k::kCollectiveTimeout) == "45");
  bool ib_disabled = false;
  for (const auto& [name, value] : parsed.options.knob_values) {
    ib_disabled = ib_disabled || (name == "NCCL_IB_DISABLE" && value == "1");
  }
  CHECK(ib_disabled);
  CHECK(parsed.options.timestamp_output);
  CHECK(parse({"-np", "2", "-prefix-timestamp", "x"}).timestamp_output);
  CHECK_FALSE(parse({"-np", "2", "x"}).timestamp_output);
  // A disabled stall check neither warns nor shuts down, whatever the times say (Horovod).
  const auto stall =
      parse({"-np", "2", "--stall-check-warning-time-seconds", "9", "--no-stall-check", "x"});
  CHECK(knob(stall, k::kStallCheckTime) == "0");
  CHECK(knob(parse({"-np", "2", "--stall-check", "x"}), k::kStallCheckTime) == "<unset>");
  // --binding-args: mpirun words after runrun's --bind-to none (the last --bind-to wins).
  CHECK(parse({"-np", "2", "--binding-args", "-bind-to core --report-bindings", "--mpi-args",
               "--mca a b", "x"})
            .mpi_args == Args{"-bind-to", "core", "--report-bindings", "--mca", "a", "b"});
  // Elastic spellings: --min-num-proc, --max-num-proc, --slots-per-host (and --slots).
  const auto elastic = parse({"--min-num-proc", "2", "--max-num-proc", "4", "--slots", "4",
                              "--host-discovery-script", "./d.sh", "x"});
  CHECK(elastic.elastic.min_np == 2);
  CHECK(elastic.elastic.max_np == 4);
  CHECK(elastic.elastic.default_slots == 4);
  CHECK(has_notice(parse_all({"-np", "2", "--slots-per-host", "2", "x"}),
                   "--slots-per-host ignored"));
}

TEST_CASE("horovodrun's flags of features runrun lacks are accepted with a notice") {
  const Args flags[] = {{"--hierarchical-allgather"},
                        {"--disable-cache"},
                        {"--log-without-timestamp"},
                        {"--mpi-threads-disable"},
                        {"--num-nccl-streams", "2"},
                        {"--autotune-bayes-opt-max-samples", "30"},
                        {"--autotune-gaussian-process-noise", "0.5"}};
  for (const Args& flag : flags) {
    Args args = {"-np", "2"};
    args.insert(args.end(), flag.begin(), flag.end());
    args.push_back("x");
    const auto parsed = parse_all(args);
    CAPTURE(flag.front());
    REQUIRE(parsed.notices.size() == 1);
    CHECK_THAT(parsed.notices.front(),
               Catch::StartsWith(flag.front()) &&
                   Catch::Contains("accepted for horovodrun compatibility and ignored: "));
    CHECK(parsed.options.knob_values.empty());
  }
  // Horovod's deprecated spelling is the same flag.
  CHECK(has_notice(parse_all({"-np", "2", "--log-hide-timestamp", "x"}),
                   "--log-without-timestamp accepted"));
  // --timeline-mark-cycles is Horovod's CYCLE_START marks, silently.
  const auto marked = parse_all({"-np", "2", "--timeline-mark-cycles", "x"});
  CHECK(marked.notices.empty());
  CHECK(knob(marked.options, runrun::knobs::kTimelineMarkCycles) == "1");
  // Their defaults, and one NCCL stream (runrun's), say nothing.
  CHECK(parse_all({"-np", "2", "--no-hierarchical-allgather", "--no-timeline-mark-cycles",
                   "--log-with-timestamp", "--no-mpi-threads-disable", "--num-nccl-streams", "1",
                   "x"})
            .notices.empty());
}

TEST_CASE("horovodrun's flags runrun cannot honour, and bad values, are errors saying why") {
  CHECK_THAT(error_of({"-np", "2", "--jsrun", "x"}),
             Catch::Contains("--jsrun") && Catch::Contains("use --mpi"));
  CHECK_THAT(error_of({"-np", "2", "--binding-args", "--rankfile rf", "x"}),
             Catch::Contains("'--rankfile' is not taken: runrun places the ranks itself") &&
                 Catch::Contains("--thread-affinity"));
  CHECK_THAT(error_of({"-np", "2", "--binding-args", "-map-by socket", "x"}),
             Catch::Contains("'-map-by' is not taken"));
  CHECK_THAT(error_of({"--gloo", "-np", "2", "--binding-args", "--bind-to core", "x"}),
             Catch::Contains("--gloo does not run"));
  CHECK_THAT(error_of({"-np", "2", "--hierarchical-allreduce", "--no-hierarchical-allreduce", "x"}),
             Catch::Contains("both given"));
  CHECK_THAT(error_of({"-np", "2", "--stall-check", "--no-stall-check", "x"}),
             Catch::Contains("both given"));
  CHECK_THAT(error_of({"-np", "2", "--autotune", "--no-autotune", "x"}),
             Catch::Contains("--no-autotune and --autotune both given"));
  CHECK_THAT(error_of({"-np", "2", "--timeline-mark-cycles", "--no-timeline-mark-cycles", "x"}),
             Catch::Contains("both given"));
  CHECK_THAT(error_of({"-np", "2", "--gloo-timeout-seconds", "-1", "x"}),
             Catch::Contains("--gloo-timeout-seconds must be a whole number >= 0, got '-1'"));
  CHECK_THAT(error_of({"-np", "2", "--num-nccl-streams", "two", "x"}),
             Catch::Contains("--num-nccl-streams"));
  CHECK_THAT(error_of({"-np", "2", "--autotune-gaussian-process-noise", "1.5", "x"}),
             Catch::Contains("[0, 1]") && Catch::Contains("'1.5'"));
  CHECK_THAT(error_of({"-np", "2", "--autotune-bayes-opt-max-samples", "-2", "x"}),
             Catch::Contains("--autotune-bayes-opt-max-samples"));
  CHECK_THAT(
      error_of({"--min-np", "2", "--slots-per-host", "-1", "--host-discovery-script", "d", "x"}),
      Catch::Contains("--slots-per-host must be at least 1"));
}

TEST_CASE(
    "the option --network-interface also gives NCCL its interfaces (NCCL_SOCKET_IFNAME), as "
    "horovodrun") {
  const auto value_of = [](const LaunchOptions& options, const std::string& name) {
    for (const auto& [variable, value] : options.knob_values) {
      if (variable == name) return value;
    }
    return std::string("<unset>");
  };
  const auto one = parse({"-np", "2", "--network-interface", "eth1", "x"});
  CHECK(one.network_interface == "eth1");
  CHECK(value_of(one, "NCCL_SOCKET_IFNAME") == "eth1");
  // Repeated (horovodrun's new form), the plural, and lists: one list, each item once.
  const auto many = parse({"-np", "2", "--network-interface", "eth0", "--network-interface",
                           "ib0,eth0", "--network-interfaces", "10.0.0.0/8", "x"});
  CHECK(many.network_interface == "eth0,ib0,10.0.0.0/8");
  // A CIDR block names no interface that holds on every host: NCCL gets the names only.
  CHECK(value_of(many, "NCCL_SOCKET_IFNAME") == "eth0,ib0");
  CHECK(value_of(parse({"-np", "2", "--network-interface", "10.0.0.0/8", "x"}),
                 "NCCL_SOCKET_IFNAME") == "<unset>");
  CHECK(value_of(parse({"-np", "2", "x"}), "NCCL_SOCKET_IFNAME") == "<unset>");
}

TEST_CASE("start and elastic timeouts: the flag, else RUNRUN_*, else HOROVOD_* (as horovodrun)") {
  const Args job = {"-np", "2", "x"};
  CHECK(parse(job).start_timeout_s == 30);
  CHECK(parse(job, {{"HOROVOD_START_TIMEOUT", "90"}}).start_timeout_s == 90);
  CHECK(parse(job, {{"RUNRUN_START_TIMEOUT", "45"}, {"HOROVOD_START_TIMEOUT", "90"}})
            .start_timeout_s == 45);
  CHECK(parse({"-np", "2", "--start-timeout", "7", "x"}, {{"RUNRUN_START_TIMEOUT", "45"}})
            .start_timeout_s == 7);
  const Args elastic = {"--min-np", "1", "--max-np", "2", "x"};
  CHECK(parse(elastic).elastic.elastic_timeout_s == 600);
  CHECK(parse(elastic, {{"HOROVOD_ELASTIC_TIMEOUT", "120"}}).elastic.elastic_timeout_s == 120);
  CHECK(parse(elastic, {{"RUNRUN_ELASTIC_TIMEOUT", "60"}, {"HOROVOD_ELASTIC_TIMEOUT", "120"}})
            .elastic.elastic_timeout_s == 60);
  CHECK(parse({"--min-np", "1", "--max-np", "2", "--elastic-timeout", "5", "x"},
              {{"HOROVOD_ELASTIC_TIMEOUT", "120"}})
            .elastic.elastic_timeout_s == 5);
  const auto error_with = [](const Args& args, const Environment& env) {
    std::ostringstream out;
    try {
      parse_command_line(args, env, out);
    } catch (const runrun::InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(
      error_with(job, {{"HOROVOD_START_TIMEOUT", "soon"}}),
      Catch::Contains("HOROVOD_START_TIMEOUT='soon' is not a whole number of seconds >= 1") &&
          Catch::Contains("--start-timeout is not given"));
  CHECK_THAT(error_with(job, {{"RUNRUN_START_TIMEOUT", "0"}}),
             Catch::Contains("RUNRUN_START_TIMEOUT='0'"));
  CHECK_THAT(error_with(elastic, {{"HOROVOD_ELASTIC_TIMEOUT", "-1"}}),
             Catch::Contains("HOROVOD_ELASTIC_TIMEOUT='-1'"));
  // An invalid variable does not matter when the flag is given.
  CHECK(parse({"-np", "2", "--start-timeout", "3", "x"}, {{"HOROVOD_START_TIMEOUT", "soon"}})
            .start_timeout_s == 3);
}
