#include "launcher/processes/unique_fd.h"

#include <unistd.h>

namespace runrun::launcher {

void UniqueFd::reset(int fd) noexcept {
  const int old = std::exchange(fd_, fd);
  if (old >= 0 && old != fd) close(old);
}

}  // namespace runrun::launcher
