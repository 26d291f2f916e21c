#include "ops/shm/shm_cma.h"

#include <sys/uio.h>

#include <cerrno>

namespace runrun::shm {

int read_process_memory(pid_t pid, void* local, const void* remote, size_t bytes) {
  auto* to = static_cast<char*>(local);
  const auto* from = static_cast<const char*>(remote);
  while (bytes > 0) {
    iovec mine{to, bytes};
    iovec theirs{const_cast<char*>(from), bytes};
    const ssize_t done = process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (done == 0) return EFAULT;  // nothing moved: never loop forever
    to += done;
    from += done;
    bytes -= static_cast<size_t>(done);
  }
  return 0;
}

}  // namespace runrun::shm
