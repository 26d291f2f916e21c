#pragma once
// Why: a rank of a shared-memory group can read a peer's buffer straight out of the peer's
// address space with one copy (cross-memory attach, process_vm_readv, as Open MPI's vader does
// for large messages) instead of the peer copying it into a slot and the rank copying it out.
// The kernel refuses it where ptrace is not permitted between the processes (Yama, seccomp,
// other users, other pid namespaces): callers probe first and keep the slot path then.
// Thread-safety: any thread.

#include <sys/types.h>

#include <cstddef>

namespace runrun::shm {

// Reads `bytes` at `remote` in process `pid` into `local` (looping over partial reads).
// Returns 0 on success, else the errno of the failing call (EPERM, ESRCH, EFAULT, ENOSYS...).
int read_process_memory(pid_t pid, void* local, const void* remote, size_t bytes);

}  // namespace runrun::shm
