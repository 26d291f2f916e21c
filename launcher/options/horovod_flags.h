#pragma once
// Why: horovodrun defines flags for features runrun implements differently or not at all. A
// command line written for horovodrun must still work: each such flag is declared here and
// either becomes what runrun does with the same meaning (a variable for the ranks, mpirun
// words, output timestamps) or, where ignoring it is harmless, is accepted with a one-line
// notice saying so; a flag whose meaning runrun cannot honour is an error saying what to do
// instead. The meanings are horovodrun's (horovod/runner/launch.py, config_parser.py);
// docs/launcher.md, "horovodrun compatibility", lists every flag and what runrun does with it.
// Thread-safety: plain functions.

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace runrun::launcher {

struct HorovodFlags {
  bool hierarchical_allgather = false, no_hierarchical_allgather = false;
  bool timeline_mark_cycles = false, no_timeline_mark_cycles = false;
  bool disable_cache = false;
  bool log_without_timestamp = false, log_with_timestamp = false;
  bool prefix_output_with_timestamp = false;
  bool tcp = false;
  std::string binding_args;
  bool mpi_threads_disable = false, no_mpi_threads_disable = false;
  std::string num_nccl_streams;      // as written
  std::string gloo_timeout_seconds;  // as written
  bool jsrun = false;
};

void add_horovod_flags(CLI::App& app, HorovodFlags& flags);

// What the flags amount to.
struct HorovodFlagEffects {
  // Variables every rank gets: NCCL_IB_DISABLE=1 (--tcp), RUNRUN_COLLECTIVE_TIMEOUT
  // (--gloo-timeout-seconds).
  std::vector<std::pair<std::string, std::string>> rank_variables;
  std::vector<std::string> mpirun_words;  // --binding-args, checked
  bool timestamp_output = false;          // --prefix-output-with-timestamp
  std::vector<std::string> notices;       // one line per flag accepted and ignored
};

// Throws InvalidArgumentError for a malformed value, both flags of a pair (`--x` and `--no-x`,
// as horovodrun's mutually exclusive groups), --jsrun, or binding arguments that would move
// ranks (runrun places them itself).
HorovodFlagEffects horovod_flag_effects(const HorovodFlags& flags);

}  // namespace runrun::launcher
