#pragma once
// Why: fork() copies a process's memory but only the thread that forked. A child forked after
// runrun_init (a data-loader worker, os.fork, multiprocessing's "fork" start method) holds copies
// of the runtime, its queue and its handles without the background thread that runs them, and
// shares the parent's sockets and shared memory: an op there would wait for ever, and a shutdown
// would tell the parent's peers, in the parent's name, that the parent left. The C API stamps
// each runtime and handle with the process it was made in and refuses in a forked child
// instead: ops and waits fail at once naming both processes, and shutdown and destroy do
// nothing there (the parent's runtime is unaffected).
// Thread-safety: any thread. The stamp is atomic; pthread_atfork's child handler renews it.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace runrun {

// Which process something was made in: the fork generation (0 in the process that called
// watch_forks(), one more in each generation of forked children) and that process's pid.
struct ForkStamp {
  uint64_t generation = 0;
  pid_t pid = 0;
};

// Registers the fork handler (once per process; idempotent and thread-safe).
void watch_forks();

// This process's stamp (two atomic loads: no system call).
ForkStamp fork_stamp();

// Whether this process is a forked child of the one that made `stamp`.
inline bool forked_since(const ForkStamp& stamp) {
  return fork_stamp().generation != stamp.generation;
}

// The error for `what` ("allreduce", "waiting for an op") in a child forked after runrun was
// initialized in the process of `stamp`.
std::string forked_child_message(const std::string& what, const ForkStamp& stamp);

}  // namespace runrun
