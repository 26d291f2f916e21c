#include "launcher/options/horovod_flags.h"

#include "common/errors.h"
#include "common/knobs.h"
#include "launcher/remote/shell_words.h"

namespace runrun::launcher {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw InvalidArgumentError(RUNRUN_WHERE, message);
}

void check_pair(bool on, bool off, const char* on_name, const char* off_name) {
  if (on && off) invalid(std::string(on_name) + " and " + off_name + " both given: use one");
}

std::string accepted(const std::string& flag, const std::string& why) {
  return flag + " accepted for horovodrun compatibility and ignored: " + why;
}

// A whole number of seconds (or streams) >= 0, as horovodrun's type=int with its >= 0 check.
long whole_number(const std::string& text, const char* flag) {
  const bool digits = !text.empty() && text.size() <= 9 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) invalid(std::string(flag) + " must be a whole number >= 0, got '" + text + "'");
  return std::stol(text);
}

// horovodrun puts --binding-args where mpirun's `-bind-to none -map-by slot` would go. runrun's
// ranks learn their local and cross rank from its own slot-by-slot placement, so only binding
// (which cores a rank may run on) can change, not where ranks go. mpirun takes the last
// --bind-to, and these words come after runrun's `--bind-to none`.
std::vector<std::string> binding_words(const std::string& text) {
  std::vector<std::string> words = split_shell_words(text, "--binding-args");
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const std::size_t dashes = word.find_first_not_of('-');
    const std::string name = dashes == 0 || dashes == std::string::npos ? "" : word.substr(dashes);
    if (name == "bind-to" && i + 1 < words.size()) {
      ++i;  // its policy: none, hwthread, core, l1cache, ..., socket, numa, board
      continue;
    }
    if (name == "report-bindings") continue;
    invalid("--binding-args '" + text + "': '" + word +
            "' is not taken: runrun places the ranks itself (host by host, slot by slot, and "
            "tells each rank its local and cross rank from that), so only '--bind-to POLICY' "
            "and '--report-bindings' may be given; to pin runrun's own threads use "
            "--thread-affinity");
  }
  return words;
}

}  // namespace

void add_horovod_flags(CLI::App& app, HorovodFlags& flags) {
  app.add_flag("--hierarchical-allgather", flags.hierarchical_allgather,
               "accepted for horovodrun compatibility; runrun's allgather is flat");
  app.add_flag("--no-hierarchical-allgather", flags.no_hierarchical_allgather,
               "accepted for horovodrun compatibility (runrun's allgather is flat)");
  app.add_flag("--timeline-mark-cycles", flags.timeline_mark_cycles,
               "accepted for horovodrun compatibility; runrun's timeline marks no cycles");
  app.add_flag("--no-timeline-mark-cycles", flags.no_timeline_mark_cycles,
               "accepted for horovodrun compatibility (no cycle marks)");
  app.add_flag("--disable-cache", flags.disable_cache,
               "accepted for horovodrun compatibility; runrun caches no check results");
  app.add_flag("--log-without-timestamp,--log-hide-timestamp", flags.log_without_timestamp,
               "accepted for horovodrun compatibility; runrun's log lines keep their time");
  app.add_flag("--log-with-timestamp,--no-log-hide-timestamp", flags.log_with_timestamp,
               "log lines with their time (the default)");
  app.add_flag("--prefix-output-with-timestamp", flags.prefix_output_with_timestamp,
               "begin every output line of the ranks with the time it arrived (also "
               "-prefix-timestamp)");
  app.add_flag("--tcp", flags.tcp,
               "NCCL over TCP sockets only, not InfiniBand "
               "(NCCL_IB_DISABLE=1 for every rank)");
  app.add_option("--binding-args", flags.binding_args,
                 "mpirun's '--bind-to POLICY' (and '--report-bindings'): bind each rank");
  app.add_flag("--mpi-threads-disable", flags.mpi_threads_disable,
               "accepted for horovodrun compatibility; runrun's MPI runs multi-threaded");
  app.add_flag("--no-mpi-threads-disable", flags.no_mpi_threads_disable,
               "MPI with thread support (the default)");
  app.add_option("--num-nccl-streams", flags.num_nccl_streams,
                 "accepted for horovodrun compatibility; runrun uses one stream per device");
  app.add_option("--gloo-timeout-seconds", flags.gloo_timeout_seconds,
                 "a collective fails after N s (RUNRUN_COLLECTIVE_TIMEOUT; 0: no limit)");
  app.add_flag("--jsrun", flags.jsrun, "not available: use --mpi or --gloo");
}

HorovodFlagEffects horovod_flag_effects(const HorovodFlags& flags) {
  check_pair(flags.hierarchical_allgather, flags.no_hierarchical_allgather,
             "--hierarchical-allgather", "--no-hierarchical-allgather");
  check_pair(flags.timeline_mark_cycles, flags.no_timeline_mark_cycles, "--timeline-mark-cycles",
             "--no-timeline-mark-cycles");
  check_pair(flags.log_without_timestamp, flags.log_with_timestamp, "--log-without-timestamp",
             "--log-with-timestamp");
  check_pair(flags.mpi_threads_disable, flags.no_mpi_threads_disable, "--mpi-threads-disable",
             "--no-mpi-threads-disable");
  if (flags.jsrun) {
    invalid(
        "--jsrun: runrun does not start jobs with LSF's jsrun; use --mpi (Open MPI's "
        "mpirun) or --gloo (no MPI), with the hosts of the allocation in -H or --hostfile");
  }
  HorovodFlagEffects effects;
  if (flags.hierarchical_allgather) {
    effects.notices.push_back(accepted("--hierarchical-allgather",
                                       "runrun has no hierarchical allgather (allgather runs "
                                       "flat; --hierarchical-allreduce is the allreduce's)"));
  }
  if (flags.timeline_mark_cycles) {
    effects.rank_variables.emplace_back("RUNRUN_TIMELINE_MARK_CYCLES", "1");
  }
  if (flags.disable_cache) {
    effects.notices.push_back(accepted("--disable-cache",
                                       "runrun keeps no cache of its checks between runs; every "
                                       "check runs every time"));
  }
  if (flags.log_without_timestamp) {
    effects.notices.push_back(
        accepted("--log-without-timestamp", "runrun's log lines always begin with their time"));
  }
  if (flags.mpi_threads_disable) {
    effects.notices.push_back(accepted("--mpi-threads-disable",
                                       "runrun initializes MPI with MPI_THREAD_MULTIPLE, which "
                                       "its background threads need"));
  }
  if (!flags.num_nccl_streams.empty() &&
      whole_number(flags.num_nccl_streams, "--num-nccl-streams") != 1) {
    effects.notices.push_back(accepted("--num-nccl-streams " + flags.num_nccl_streams,
                                       "runrun runs NCCL on one stream per device"));
  }
  effects.timestamp_output = flags.prefix_output_with_timestamp;
  if (flags.tcp) effects.rank_variables.emplace_back("NCCL_IB_DISABLE", "1");
  if (!flags.gloo_timeout_seconds.empty()) {
    whole_number(flags.gloo_timeout_seconds, "--gloo-timeout-seconds");
    effects.rank_variables.emplace_back(std::string(knobs::kCollectiveTimeout.env_name),
                                        flags.gloo_timeout_seconds);
  }
  if (!flags.binding_args.empty()) effects.mpirun_words = binding_words(flags.binding_args);
  return effects;
}

}  // namespace runrun::launcher
