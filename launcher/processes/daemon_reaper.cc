#include "launcher/processes/daemon_reaper.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <string>

#include "launcher/options/peer_timeout.h"

namespace runrun::launcher {
namespace {

constexpr long kMinimumGraceMs = 5000;
constexpr long kMaximumGraceMs = 10000;
constexpr int kKillAfterTermMs = 3000;

int pidfd_open_of(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

void pidfd_signal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
  syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0);
#else
  (void)pidfd;
  (void)sig;
#endif
}

// True when the process behind `pidfd` exited within `timeout_ms` (a pidfd polls readable then).
bool exits_within(int pidfd, long timeout_ms) {
  pollfd daemon{pidfd, POLLIN, 0};
  for (;;) {
    const int n = poll(&daemon, 1, static_cast<int>(timeout_ms));
    if (n < 0 && errno == EINTR) continue;  // the remaining time restarts: bounded all the same
    return n != 0;
  }
}

std::string process_name(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

// In the reaper: leave the shim's session and every descriptor the daemon may be waiting on.
// Default signal handling too: the shim's handlers forward to a command that has ended.
void detach(int keep_fd) {
  setsid();
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int null_fd = open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null_fd >= 0) dup2(null_fd, fd);
  }
  const long max_fd = sysconf(_SC_OPEN_MAX);
  for (int fd = 3; fd < (max_fd > 0 ? max_fd : 1024); ++fd) {
    if (fd != keep_fd) close(fd);
  }
}

}  // namespace

bool is_open_mpi_daemon(std::string_view process_name) {
  return process_name == "orted" || process_name == "prted";
}

long daemon_reaper_grace_ms(const char* peer_timeout_text) {
  double seconds = peer_timeout_seconds(peer_timeout_text);
  if (seconds == 0) seconds = peer_timeout_seconds(nullptr);  // monitoring off: the default
  const long grace_ms = std::lround(seconds * 1000.0);
  return grace_ms < kMinimumGraceMs   ? kMinimumGraceMs
         : grace_ms > kMaximumGraceMs ? kMaximumGraceMs
                                      : grace_ms;
}

UniqueFd watch_open_mpi_daemon(pid_t parent) {
  if (parent <= 1 || !is_open_mpi_daemon(process_name(parent))) return {};
  UniqueFd pidfd(pidfd_open_of(parent));
  // The rank's command must not hold it.
  if (pidfd.valid()) fcntl(pidfd.get(), F_SETFD, FD_CLOEXEC);
  return pidfd;
}

void leave_daemon_reaper(UniqueFd daemon_pidfd, long grace_ms) {
  if (!daemon_pidfd.valid()) return;
  const int pidfd = daemon_pidfd.get();
  const pid_t reaper = fork();
  if (reaper == 0) {  // leaves by _exit: no destructor closes the pidfd here
    detach(pidfd);
    if (!exits_within(pidfd, grace_ms)) {
      pidfd_signal(pidfd, SIGTERM);
      if (!exits_within(pidfd, kKillAfterTermMs)) pidfd_signal(pidfd, SIGKILL);
    }
    _exit(0);
  }
}

}  // namespace runrun::launcher
