#pragma once
// Why: a peer on this host that is killed never advances its counters, and nothing in shared
// memory says it died; its process id does (when peers see the same process ids, i.e. share a
// pid namespace). The shared-memory waits use this to turn a dead peer into an error naming it
// at once, without waiting for the peer monitor or the collective timeout.
// Thread-safety: any thread.

#include <cstdint>
#include <sys/types.h>

namespace runrun::shm {

// An id of this process's pid namespace (the inode of /proc/self/ns/pid), 0 when unknown.
uint64_t pid_namespace_id();

// True when `pid` (of this pid namespace) no longer runs: gone, or a zombie not yet reaped.
bool process_is_gone(pid_t pid);

}  // namespace runrun::shm
