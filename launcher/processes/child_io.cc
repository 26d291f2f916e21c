#include "launcher/processes/child_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace runrun::launcher {

std::string_view read_available(UniqueFd& fd, std::span<char> buffer) {
  if (!fd.valid()) return {};
  pollfd ready{fd.get(), POLLIN, 0};
  if (poll(&ready, 1, 0) <= 0) return {};  // nothing yet (readable: data, end of file or error)
  const ssize_t n = read(fd.get(), buffer.data(), buffer.size());
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return {};
  if (n <= 0) {
    fd.reset();
    return {};
  }
  return {buffer.data(), static_cast<std::size_t>(n)};
}

void write_block(int fd, const std::string& block) {
  if (block.size() > 60000) fcntl(fd, F_SETPIPE_SZ, static_cast<int>(block.size() + 4096));
  std::size_t done = 0;
  while (done < block.size()) {
    const ssize_t n = write(fd, block.data() + done, block.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child is gone already
    done += static_cast<std::size_t>(n);
  }
}

std::optional<int> reap_if_exited(pid_t pid) {
  int status = 0;
  if (pid <= 0 || waitpid(pid, &status, WNOHANG) != pid) return std::nullopt;
  return status;
}

std::optional<int> wait_for_exit(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, 0) == pid) return status;
    if (errno != EINTR) return std::nullopt;
  }
}

}  // namespace runrun::launcher
