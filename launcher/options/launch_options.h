#pragma once
// Why: everything the user asked for on the command line, validated, in one value that the
// later steps (preflight, command building, supervision) read. Filled by parse_command_line.
// Thread-safety: a plain value.

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/hosts/cluster_hosts.h"
#include "launcher/hosts/host_list.h"

namespace runrun::launcher {

enum class Controller { kMpi, kGloo };

// Elastic training (docs/elastic.md; Horovod's flags): the job keeps running with between
// min_np and max_np ranks while hosts come and go.
struct ElasticOptions {
  bool enabled = false;          // any of the flags below was given
  int initial_np = 0;            // ranks of the first generation: -np, else min_np
  int min_np = 0;                // --min-np (default -np)
  int max_np = 0;                // --max-np (default: the slots of -H, or unbounded: INT_MAX)
  std::string discovery_script;  // --host-discovery-script: prints host:slots lines
  int elastic_timeout_s = 600;   // --elastic-timeout: waiting for min-np ranks, and a worker for
                                 // a generation that includes it
  int reset_limit = -1;          // --reset-limit: most resets after the first generation (-1: no
                                 // limit)
  int cooldown_min_s = 10;       // --blacklist-cooldown-range MIN MAX: a failing host's first
  int cooldown_max_s = 600;      // cooldown, doubled per failure up to MAX
  int default_slots = 1;         // --slots-per-host: slots of a discovered host without ':N'
  // --keep-failed-hosts: a failed worker's host keeps its other workers while it cools down
  // (off, as Horovod: the whole host leaves the job until its cooldown ends).
  bool keep_failed_hosts = false;
};

// `runrun --check-network` (launcher/network_check.h, docs/launcher.md).
struct NetworkCheckOptions {
  bool enabled = false;                      // --check-network
  std::optional<double> min_bandwidth_gbit;  // --min-bandwidth: exit 3 when a pair is below
  double budget_s = 0.15;                    // seconds per measurement (pair direction, size)
};

struct LaunchOptions {
  int num_proc = 0;              // -np
  std::vector<HostSlots> hosts;  // -H or --hostfile; default localhost:<np>
  std::string hosts_source;      // "-H", "--hostfile PATH" or "default", for messages
  // The Slurm allocation the launcher runs in (SLURM_JOB_ID): its nodes are the default hosts,
  // -H must stay inside it, and the ranks start through srun, never ssh.
  std::optional<ClusterHosts> slurm;
  std::optional<int> ssh_port;               // -p
  std::string ssh_identity_file;             // -i
  std::string rsh_agent;                     // --rsh-agent or RUNRUN_RSH_AGENT; "" means ssh
  Controller controller = Controller::kMpi;  // --mpi / --gloo
  bool controller_given = false;             // neither: mpi when mpirun is installed, else gloo
  std::vector<std::string> extra_env;        // -x VAR or VAR=value, as given
  std::string output_dir;                    // --output-filename
  bool verbose = false;
  int start_timeout_s = 30;           // --start-timeout
  std::string network_interface;      // --network-interface (names or CIDRs, commas)
  std::vector<std::string> mpi_args;  // --mpi-args, split like a shell would
  // Variables every rank gets from options: tunables (RUNRUN_* knobs, in the order of the
  // knobs), then library variables of horovodrun's flags (NCCL_IB_DISABLE for --tcp).
  std::vector<std::pair<std::string, std::string>> knob_values;
  bool timestamp_output = false;  // --prefix-output-with-timestamp
  bool dry_run = false;
  ElasticOptions elastic;
  NetworkCheckOptions network_check;
  // Internal (not a flag): the ranks' stdout lines go here instead of the launcher's stdout
  // (--check-network reads its measuring job's report from it); nullptr: stdout.
  std::FILE* capture_rank_stdout = nullptr;
  std::vector<std::string> command;  // the user's command, untouched
};

// What the command line asks for: run a job, or print something and exit.
struct ParsedCommandLine {
  enum class Action { kRun, kExit, kCheckBuild };
  Action action = Action::kRun;
  int exit_code = 0;  // for kExit (help, version, parse error)
  LaunchOptions options;
  // One line each (without "runrun: ") for flags accepted and ignored, to print on stderr.
  std::vector<std::string> notices;
};

}  // namespace runrun::launcher
