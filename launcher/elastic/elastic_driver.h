#pragma once
// Why: `runrun --gloo --min-np ...` (docs/elastic.md) keeps a job running while hosts and ranks
// come and go. The elastic driver starts one worker process per slot (each through the rank
// shim, with a stable worker id), and drives generations of the job through the rendezvous
// store (rendezvous/elastic_keys.h): whenever a worker fails, a rank reports a failed
// collective, or the discovery script's hosts change, it publishes a new generation with the
// workers still running (renumbered: rank 0 is the oldest) plus new workers on new slots, and
// the ranks re-initialize runrun in it. The job ends when a worker finishes its script (the
// others get --elastic-timeout to finish too), when fewer than --min-np workers can run for
// longer than --elastic-timeout (at once without a discovery script), when the resets exceed
// --reset-limit, or on Ctrl-C; every worker is stopped (lifeline closed, killed after a grace).
// Thread-safety: runs on the main thread; blocks SIGINT/SIGTERM/SIGHUP/SIGCHLD while it runs.
// Its parts: elastic_driver_state.h.

#include <string>

#include "launcher/remote/environment.h"
#include "launcher/options/launch_options.h"
#include "launcher/hosts/local_host.h"
#include "launcher/remote/mpirun_command.h"
#include "launcher/remote/rank_environment_block.h"
#include "rendezvous/client.h"

namespace runrun::launcher {

struct ElasticJobSettings {
  LaunchOptions options;  // options.hosts: the -H hosts, or the first discovery
  JobPlan plan;           // the forwarded environment and this executable's path
  Environment launcher_env;
  LocalHostNames local{{}};
  std::string cwd;
  EnvEntries job_entries;           // the rendezvous server, its secret, the network
  rendezvous::ClientOptions store;  // the driver's own connection to the job's store
  int stop_grace_s = 10;
  // The rendezvous server listens on loopback: remote hosts the discovery script adds later are
  // refused (launcher_main.cc says when that happens).
  bool loopback_only = false;
};

// Runs the elastic job; returns 0 when the last generation's workers all finished with 0; 1
// (kExitLauncherFailure) when the job ended because of --min-np, --reset-limit or a start
// failure, with a message naming what was lost; 128+N when stopped by signal N.
int run_elastic_job(const ElasticJobSettings& settings);

}  // namespace runrun::launcher
