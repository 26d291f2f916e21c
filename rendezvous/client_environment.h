#pragma once
// Why: how a rank learns where the job's rendezvous server is and proves it belongs to the job.
// The launcher sets RUNRUN_RENDEZVOUS_ADDR/PORT/SECRET (common/env_names.h) in each rank's
// environment; `rank_environment` builds them on the launcher's side, and
// `client_options_from_environment` reads them on the rank's side, removing the secret from the
// environment so that the processes the rank starts later (data loader workers, shell commands)
// do not inherit it.
// Thread-safety: client_options_from_environment calls unsetenv, which races with any
// concurrent getenv/setenv: call it once at start-up, before other threads read the environment.

#include <string>
#include <utility>
#include <vector>

#include "rendezvous/client.h"
#include "rendezvous/launch_environment.h"

namespace runrun::rendezvous {

// The variables to set in a rank's environment. Contains the secret: pass it to the rank's
// environment only (never on a command line, never to a log).
std::vector<std::pair<std::string, std::string>> rank_environment(const std::string& address,
                                                                  uint16_t port,
                                                                  const JobSecret& secret);

// Client options from the environment: address, port, the secret (removed from the environment
// the first time and kept in this process's memory for later calls: runrun may be shut down and
// initialized again), RUNRUN_RENDEZVOUS_TIMEOUT for the connect and request bounds, and RUNRUN_RANK
// for messages. Throws InvalidArgumentError naming the variable when one is missing or malformed;
// a missing secret is not an error here (the server refuses the client with a clear message).
ClientOptions client_options_from_environment();

// Client options of a rank of a direct launch (a Slurm step, torchrun: launch_environment.h):
// rank 0's rendezvous from the plan, the secret derived from the job's identity and
// RUNRUN_RENDEZVOUS_SECRET when set, RUNRUN_RENDEZVOUS_TIMEOUT as above.
ClientOptions client_options_for_direct_launch(const LaunchPlan& plan);

// RUNRUN_RENDEZVOUS_SECRET, read from the environment the first time and removed from it; kept
// in memory for later calls (a script may shut runrun down and initialize it again). Empty when
// it was never set.
JobSecret job_secret_of_this_process();

}  // namespace runrun::rendezvous
