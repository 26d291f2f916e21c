#include "core/runtime/thread_placement.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace runrun {
namespace {

std::string allowed_cpus_text(const cpu_set_t& allowed) {
  std::string text;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &allowed)) ++last;
    text += (text.empty() ? "" : ",") + std::to_string(cpu);
    if (last > cpu) text += "-" + std::to_string(last);
    cpu = last;
  }
  return text;
}

}  // namespace

int background_cpu(const std::vector<int>& affinity, const Topology& topology) {
  if (affinity.empty()) return -1;
  const std::string where = "RUNRUN_THREAD_AFFINITY on rank " + std::to_string(topology.rank) +
                            " (local rank " + std::to_string(topology.local_rank) + " of " +
                            std::to_string(topology.local_size) + " on its host)";
  RUNRUN_ENFORCE(static_cast<int>(affinity.size()) >= topology.local_size, InvalidArgumentError,
                 where + " lists " + std::to_string(affinity.size()) +
                     " CPU id(s): give one CPU id per local rank, comma-separated (e.g. 0,1 "
                     "for two ranks per host), or leave it empty to not pin");
  const int cpu = affinity[static_cast<size_t>(topology.local_rank)];
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return cpu;  // cannot check: try
  RUNRUN_ENFORCE(cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed), InvalidArgumentError,
                 where + " names CPU " + std::to_string(cpu) +
                     ", which this process may not run on (allowed: " + allowed_cpus_text(allowed) +
                     "): list CPUs from the allowed ones");
  return cpu;
}

void place_this_thread(const std::string& name, int cpu, const Logger& logger) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  prctl(PR_SET_TIMERSLACK, 1000UL);  // ns; a failure only leaves the default slack
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    logger->warn(
        "could not pin the background thread {} to CPU {} (RUNRUN_THREAD_AFFINITY): {}; "
        "it runs unpinned",
        name, cpu, std::strerror(rc));
  }
}

}  // namespace runrun
