#pragma once
// Why: under --mpi, a network partition can leave Open MPI's daemon (orted) running on the cut
// host long after its ranks ended. The daemon learns of a lost mpirun from its TCP keepalive,
// but keepalive only probes an idle connection: when the ranks printed during the cut, the
// daemon's connection holds unacknowledged output, and Linux retransmits it for up to about
// 15 minutes (net.ipv4.tcp_retries2) before giving up. Open MPI 4.1 offers no TCP_USER_TIMEOUT.
// So a rank's shim whose command failed (a failed rank ends an Open MPI job: a reachable
// mpirun stops the daemon within a second or so) leaves a small reaper behind that ends its
// daemon if that daemon is still there after a grace period. A healthy daemon is gone long
// before, and the reaper with it.
// Thread-safety: called from the shim's main thread (a single-threaded process); forks.
#include <sys/types.h>

#include <string_view>

#include "launcher/processes/unique_fd.h"

namespace runrun::launcher {

// True for the process names of Open MPI's per-host daemon (orted in 4.x, prted in 5.x).
bool is_open_mpi_daemon(std::string_view process_name);

// How long the reaper waits before ending a daemon that outlived its failed rank: the ranks'
// RUNRUN_PEER_TIMEOUT (`peer_timeout_text`, null when unset; its default when unset, zero or
// not a number) within 5-10 s: at least 5 s, so that a daemon still busy stopping a reachable
// job is never the one ended, and at most 10 s, since the ranks took the peer timeout already.
long daemon_reaper_grace_ms(const char* peer_timeout_text);

// A handle on the shim's parent when it is Open MPI's daemon: a pidfd, which stays bound to
// that very process (no pid reuse), close-on-exec. Returns none (!valid()) when the parent is
// something else (mpirun itself for a rank on its own host, the launcher, srun) or pidfds are
// not available.
UniqueFd watch_open_mpi_daemon(pid_t parent);

// Forks a detached reaper (a session of its own, no inherited descriptors but `daemon_pidfd`,
// standard streams on /dev/null so that the daemon sees the rank's output end) that returns at
// once when the daemon exits, and otherwise after `grace_ms` sends it SIGTERM, then SIGKILL
// 3 s later. `daemon_pidfd` is closed in the caller. Does nothing when it holds none.
void leave_daemon_reaper(UniqueFd daemon_pidfd, long grace_ms);

}  // namespace runrun::launcher
