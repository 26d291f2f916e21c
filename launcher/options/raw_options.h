#pragma once
// Why: the launcher's command line is one table of options (CLI11) filling one struct; the
// parser and validation (command_line.cc) and the table (raw_options.cc) share both, so neither
// file holds all of it.
// Thread-safety: plain values; add_options binds `raw` to `app` by reference (they live
// together, on the parsing thread).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "launcher/options/autotune_options.h"
#include "launcher/options/horovod_flags.h"
#include "launcher/options/network_check_options.h"
#include "launcher/options/profile_options.h"

namespace runrun::launcher {

// Everything CLI11 fills before validation.
struct RawOptions {
  int num_proc = 0;
  std::string hosts, hostfile;
  int ssh_port = 0;
  std::string ssh_identity_file, rsh_agent;
  bool mpi = false, gloo = false;
  std::vector<std::string> extra_env;
  std::string output_dir;  // --output-filename
  bool verbose = false;
  int start_timeout_s = 30;
  bool start_timeout_given = false, elastic_timeout_given = false;
  std::vector<std::string> network_interfaces;  // each --network-interface(s) as given
  std::string mpi_args;
  std::string fusion_threshold_mb, cycle_time_ms, cache_capacity, timeline_filename, log_level,
      stall_warning_s, stall_shutdown_s;
  bool no_stall_check = false, stall_check = false;
  int min_np = 0, max_np = 0, reset_limit = -1, elastic_timeout_s = 600, slots_per_host = 0;
  std::vector<int> cooldown_range;
  bool keep_failed_hosts = false;
  std::string discovery_script;
  bool check_build = false;
  bool hierarchical_allreduce = false, no_hierarchical_allreduce = false;
  std::string hierarchical_allreduce_cross;
  std::string thread_affinity;
  AutotuneFlags autotune;
  NetworkCheckFlags network_check;
  ProfileFlags profile;
  HorovodFlags horovod;
  std::string config_file;
  bool dry_run = false;
  bool version = false;
};

// Adds every option of `runrun --help`, in its order, each filling its field of `raw`.
void add_options(CLI::App& app, RawOptions& raw);

}  // namespace runrun::launcher
