#pragma once
// Why: a setting that only one rank can refuse (RUNRUN_TIMELINE, which rank 0 alone opens;
// RUNRUN_THREAD_AFFINITY, which names a CPU per local rank of each host) used to be checked
// after the transport had connected every rank. The refusing rank then failed while its peers
// waited for it inside init(): over MPI, for RUNRUN_PEER_TIMEOUT, ending with a misleading
// timeout, and the launcher's summary named a healthy rank. These checks run before the
// transport, from the rank's place as its launcher's environment gives it, so the refusing
// rank fails alone and at once; runrun_init also tells the launcher that it failed in init()
// (common/rank_events.h), which then names it and stops the job at once.
// Thread-safety: pure functions of their arguments (and of the file system and the process's
// allowed CPUs, which they only read; the timeline check removes the file it created).

#include <map>
#include <string>

#include "core/runtime/config.h"

namespace runrun {

// This rank's place before any transport connected it; -1 where the environment does not say.
struct EarlyPlace {
  int rank = -1;
  int local_rank = -1;
  int local_size = -1;
};

// From runrun's rank shim (RUNRUN_RANK, RUNRUN_LOCAL_RANK, RUNRUN_LOCAL_SIZE), else Open MPI's
// mpirun (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _LOCAL_SIZE); else, when `alone` (the launch
// detected is a job of one: rendezvous/launch_environment.h), rank 0, local rank 0 of 1; else
// unknown (torchrun's and Slurm's variables are left to the runtime, which knows once
// connected: a pod's RANK, say, need not be this process's rank).
EarlyPlace early_place(const std::map<std::string, std::string>& env, bool alone);
EarlyPlace early_place_of_this_process(bool alone);

// Throws InvalidArgumentError, naming the setting and the rank, when this rank would refuse
// `config` once connected: rank 0 cannot open RUNRUN_TIMELINE for writing, or this local
// rank's RUNRUN_THREAD_AFFINITY entry is missing or a CPU it may not run on. Checks only what
// `place` makes known (a check whose rank is unknown is left to the runtime).
void check_before_transport(const Config& config, const EarlyPlace& place);

}  // namespace runrun
