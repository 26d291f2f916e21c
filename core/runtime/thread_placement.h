#pragma once
// Why: RUNRUN_THREAD_AFFINITY (Horovod's HOROVOD_THREAD_AFFINITY): pin each rank's background
// threads to one CPU per local rank, so that the ranks of a host never queue their background
// threads behind each other on one CPU while another idles (docs/configuration.md); and a name
// per background thread ("runrun-set<id>") so that `top -H` and debuggers show which is which.
// Threading: background_cpu() is a pure function of its arguments and of the process's allowed
// CPUs; place_this_thread() acts on the calling thread only.

#include <string>
#include <vector>

#include "common/logging.h"
#include "ops/backend.h"

namespace runrun {

// The CPU this rank's background threads run on: affinity[local_rank], or -1 when `affinity`
// is empty (not pinned). Throws InvalidArgumentError naming RUNRUN_THREAD_AFFINITY, the rank
// and what to do when the list has fewer entries than local ranks or names a CPU this process
// may not run on.
int background_cpu(const std::vector<int>& affinity, const Topology& topology);

// Names the calling thread `name` (at most 15 characters are kept) and, when `cpu` >= 0, pins
// it to that CPU. A failure to pin is logged as a warning, not thrown: the thread still works.
// Also sets the thread's timer slack to 1 us (Linux lets timed sleeps overrun by 50 us by
// default): its timed waits are tens of microseconds (TensorQueue::settle, ops/shm).
void place_this_thread(const std::string& name, int cpu, const Logger& logger);

}  // namespace runrun
