#include "launcher/options/raw_options.h"

namespace runrun::launcher {
namespace {

// Where the ranks run and how they start (the first options of --help).
void add_launch_options(CLI::App& app, RawOptions& raw) {
  app.add_option("--num-proc", raw.num_proc, "number of processes (also -np)");
  app.add_option("-H,--hosts", raw.hosts, "host:slots,... (default localhost:<np>)");
  app.add_option("--hostfile", raw.hostfile,
                 "file of 'host slots=N' or 'host:N' lines (also -hostfile)");
  app.add_option("-p,--ssh-port", raw.ssh_port, "ssh port on the remote hosts");
  app.add_option("-i,--ssh-identity-file", raw.ssh_identity_file, "ssh private key file");
  app.add_option("--rsh-agent", raw.rsh_agent,
                 "command used instead of ssh to reach hosts (default: $RUNRUN_RSH_AGENT or ssh)");
  app.add_flag("--mpi", raw.mpi,
               "start the ranks with Open MPI's mpirun (the default when mpirun is installed)");
  app.add_flag("--gloo", raw.gloo,
               "start the ranks without MPI: the launcher starts them (ssh for other hosts) and "
               "they connect over Gloo (the default when mpirun is not installed)");
  app.add_option("-x", raw.extra_env, "VAR or VAR=value: forward this variable to every rank")
      ->allow_extra_args(false);
  app.add_option("--output-filename", raw.output_dir,
                 "also write each rank's output to DIR/rank.N/{stdout,stderr}");
  app.add_flag("--verbose", raw.verbose, "print the checks and the mpirun command");
  app.add_option("--start-timeout", raw.start_timeout_s,
                 "seconds every rank has to start (default 30)");
  app.add_option("--network-interface,--network-interfaces", raw.network_interfaces,
                 "interface name(s) or CIDR(s), comma-separated, for MPI's TCP traffic, Gloo "
                 "and NCCL (NCCL_SOCKET_IFNAME); repeatable")
      ->allow_extra_args(false);
  app.add_option("--mpi-args", raw.mpi_args, "extra mpirun arguments, as one shell-like string");
}

// The runtime's knobs, passed to the ranks as RUNRUN_* variables.
void add_runtime_options(CLI::App& app, RawOptions& raw) {
  app.add_option("--fusion-threshold-mb", raw.fusion_threshold_mb, "fusion buffer size in MiB");
  app.add_option("--cycle-time-ms", raw.cycle_time_ms, "longest batching wait in ms");
  app.add_option("--cache-capacity", raw.cache_capacity, "response cache entries (0: off)");
  app.add_option("--timeline-filename", raw.timeline_filename, "write a Chrome-trace timeline");
  app.add_flag("--hierarchical-allreduce", raw.hierarchical_allreduce,
               "allreduce CPU tensors host by host (RUNRUN_HIERARCHICAL_ALLREDUCE=1)");
  app.add_flag("--no-hierarchical-allreduce", raw.no_hierarchical_allreduce,
               "flat allreduce even where RUNRUN_HIERARCHICAL_ALLREDUCE/HOROVOD_... say "
               "otherwise (RUNRUN_HIERARCHICAL_ALLREDUCE=0)");
  app.add_option("--hierarchical-allreduce-cross", raw.hierarchical_allreduce_cross,
                 "nccl or staging: the stage across hosts of the hierarchical allreduce of CUDA "
                 "tensors, over NCCL or staged through host memory over MPI/Gloo "
                 "(RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS)");
  app.add_option("--thread-affinity", raw.thread_affinity,
                 "CPU ids, one per local rank (e.g. 0,1): pin each rank's background threads "
                 "(RUNRUN_THREAD_AFFINITY)");
}

void add_log_and_stall_options(CLI::App& app, RawOptions& raw) {
  app.add_option("--log-level", raw.log_level,
                 "trace, debug, info, warn, error, critical or off; Horovod's TRACE, DEBUG, "
                 "INFO, WARNING, ERROR, FATAL too (any case)");
  app.add_option("--stall-check-warning-time-seconds", raw.stall_warning_s,
                 "report a tensor some ranks submitted and others not after N s");
  app.add_option("--stall-check-shutdown-time-seconds", raw.stall_shutdown_s,
                 "fail such a stalled op after N s (0: never)");
  app.add_flag("--no-stall-check", raw.no_stall_check,
               "no stall warning and no stall shutdown (both times 0)");
  app.add_flag("--stall-check", raw.stall_check, "the stall check on (the default)");
}

void add_elastic_options(CLI::App& app, RawOptions& raw) {
  app.add_option("--min-np,--min-num-proc", raw.min_np,
                 "elastic: keep running while at least N ranks can run (docs/elastic.md)");
  app.add_option("--max-np,--max-num-proc", raw.max_np, "elastic: run at most N ranks");
  app.add_option("--slots-per-host", raw.slots_per_host,
                 "elastic: slots of a host the discovery script prints without ':N' (default 1)");
  app.add_option("--host-discovery-script", raw.discovery_script,
                 "elastic: program printing the available 'host:slots' lines, run every second");
  app.add_option("--elastic-timeout", raw.elastic_timeout_s,
                 "elastic: seconds to wait for --min-np ranks after a change (default 600)");
  app.add_option("--reset-limit", raw.reset_limit,
                 "elastic: end the job after N resets (default: no limit)");
  app.add_option("--blacklist-cooldown-range", raw.cooldown_range,
                 "elastic: MIN MAX seconds a failing host gets no new worker; doubles per "
                 "failure (default 10 600)")
      ->expected(2)
      ->allow_extra_args(false);
  app.add_flag("--keep-failed-hosts", raw.keep_failed_hosts,
               "elastic: a failed worker's host "
               "keeps its other workers (default: it leaves until its cooldown ends)");
}

}  // namespace

void add_options(CLI::App& app, RawOptions& raw) {
  add_launch_options(app, raw);
  add_runtime_options(app, raw);
  add_autotune_flags(app, raw.autotune);
  add_log_and_stall_options(app, raw);
  add_elastic_options(app, raw);
  app.add_flag("--check-build", raw.check_build,
               "print what this build contains and exit (also -cb)");
  add_network_check_flags(app, raw.network_check);
  add_profile_flags(app, raw.profile);
  add_horovod_flags(app, raw.horovod);
  app.add_option("--config-file", raw.config_file,
                 "horovodrun's YAML settings (params, autotune, timeline, stall_check, "
                 "library_options, logging); flags on the command line win");
  app.add_flag("--dry-run", raw.dry_run, "print the command that would run and exit");
  app.add_flag("-v,--version", raw.version, "print the version and exit");
}

}  // namespace runrun::launcher
