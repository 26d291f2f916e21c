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

// Sockets whose peer must notice when this process dies (the peer monitor's connections): a
// forked child's copy would keep such a socket open after the parent died, and the peer would
// notice the death only by the heartbeat timeout. A registered fd is closed in every child forked
// while it is registered (by the fork handler, before the child runs anything else; the parent's
// socket stays open). Unregister before closing the fd. At most kMaxForkClosedFds at once; more
// are left open in children (the peer then notices by the timeout).
inline constexpr int kMaxForkClosedFds = 4096;
void close_in_forked_children(int fd);
void keep_in_forked_children(int fd);

// The error for `what` ("allreduce", "waiting for an op") in a child forked after runrun was
// initialized in the process of `stamp`.
std::string forked_child_message(const std::string& what, const ForkStamp& stamp);

}  // namespace runrun
