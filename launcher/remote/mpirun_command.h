#pragma once
// Why: the exact translation of the runrun command line into Open MPI's mpirun command line,
// in one pure function, so that --dry-run prints precisely what runs, unit tests can compare
// argv exactly, and docs/launcher.md documents one place.
// Thread-safety: pure function.

#include <string>
#include <vector>

#include "launcher/remote/env_forwarding.h"
#include "launcher/hosts/host_list.h"
#include "launcher/options/launch_options.h"

namespace runrun::launcher {

// What the launcher decided before building the command.
struct JobPlan {
  std::string mpirun_path;               // absolute path of Open MPI's mpirun
  std::string launcher_path;             // this runrun executable (runs as the rank shim)
  bool as_root = false;                  // add --allow-run-as-root
  std::vector<HostSlots> hosts;          // hosts in use, processes per host (local: localhost)
  std::vector<std::string> host_labels;  // the same hosts as the user wrote them, for messages
  ForwardedEnv env;
  // The ranks' RUNRUN_PEER_TIMEOUT in seconds (0: peer monitoring off): Open MPI's daemons are
  // told to notice a lost connection to mpirun within it (lifeline_keepalive_args).
  int peer_timeout_s = 30;
};

// The TCP keepalive settings of Open MPI's out-of-band connections (mpirun to its daemons) that
// make both ends notice a cut link within about two thirds of `peer_timeout_s`: the daemons
// then stop their ranks and exit (a "lifeline lost"), and mpirun ends the job. Without them a
// daemon on the far side of a cut link runs on for as long as the cut lasts (Open MPI's
// default is 300 s idle, then 9 probes 20 s apart; issue 36, point 5). The keepalive must
// fire before the ranks notice their lost peers: once a daemon sends their failure reports
// into the cut link, TCP retransmits them instead of probing. Empty when `peer_timeout_s` is 0
// or the user's --mpi-args set any oob_tcp_keepalive parameter.
std::vector<std::string> lifeline_keepalive_args(int peer_timeout_s,
                                                 const std::vector<std::string>& mpi_args);

// The argv of the mpirun command:
//   mpirun [--allow-run-as-root] --noprefix -np N -H h1:n1,h2:n2 --bind-to none --map-by slot
//     --tag-output
//     [--mca plm_rsh_agent AGENT] [--mca plm_rsh_args "-p PORT -i FILE"]
//     [--mca btl_tcp_if_include IF --mca oob_tcp_if_include IF]
//     [--mca oob_tcp_keepalive_time S --mca oob_tcp_keepalive_intvl S
//      --mca oob_tcp_keepalive_probes N]   (lifeline_keepalive_args)
//     -x NAME... -x NAME=value... [--mpi-args words...]
//     RUNRUN --rank-shim LAYOUT -- COMMAND...
std::vector<std::string> build_mpirun_command(const LaunchOptions& options, const JobPlan& plan);

// The rank shim's marker argument (argv[1] of the shim).
inline constexpr const char* kRankShimFlag = "--rank-shim";

}  // namespace runrun::launcher
