#pragma once
// Why: everything the user asked for on the command line, validated, in one value that the
// later steps (preflight, command building, supervision) read. Filled by parse_command_line.
// Thread-safety: a plain value.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/host_list.h"

namespace runrun::launcher {

enum class Controller { kMpi, kGloo };

struct LaunchOptions {
  int num_proc = 0;                        // -np
  std::vector<HostSlots> hosts;            // -H or --hostfile; default localhost:<np>
  std::string hosts_source;                // "-H", "--hostfile PATH" or "default", for messages
  std::optional<int> ssh_port;             // -p
  std::string ssh_identity_file;           // -i
  std::string rsh_agent;                   // --rsh-agent or RUNRUN_RSH_AGENT; "" means ssh
  Controller controller = Controller::kMpi;  // --mpi / --gloo
  bool controller_given = false;             // neither: mpi when mpirun is installed, else gloo
  std::vector<std::string> extra_env;      // -x VAR or VAR=value, as given
  std::string output_dir;                  // --output-filename
  bool verbose = false;
  int start_timeout_s = 30;                // --start-timeout
  std::string network_interface;           // --network-interface (names or CIDRs, commas)
  std::vector<std::string> mpi_args;       // --mpi-args, split like a shell would
  // Tunables: (RUNRUN_* variable, value), in the order of the knobs.
  std::vector<std::pair<std::string, std::string>> knob_values;
  bool dry_run = false;
  std::vector<std::string> command;        // the user's command, untouched
};

// What the command line asks for: run a job, or print something and exit.
struct ParsedCommandLine {
  enum class Action { kRun, kExit, kCheckBuild };
  Action action = Action::kRun;
  int exit_code = 0;  // for kExit (help, version, parse error)
  LaunchOptions options;
};

}  // namespace runrun::launcher
