#pragma once
// Why: the supervisor and the elastic driver each run one poll loop that must see Ctrl-C,
// SIGTERM, SIGHUP and its children's ends (SIGCHLD) without a handler racing the loop: the
// signals are blocked and read from a signalfd the loop polls. Both must hand the process back
// as they found it (a launcher call inside a test, or a later phase of the launcher, expects its
// own mask and SIGPIPE disposition), on every path out, exceptions included.
// Thread-safety: changes the calling thread's signal mask (pthread_sigmask) and the process's
// SIGPIPE disposition; create and destroy on the same thread, the one that polls fd().

#include <signal.h>

#include <initializer_list>
#include <vector>

#include "launcher/processes/unique_fd.h"

namespace runrun::launcher {

// Blocks `signals` in the calling thread and opens a non-blocking, close-on-exec signalfd for
// them (fd() is -1 when the kernel refused one; polling -1 is harmless). The destructor closes
// it and restores the mask found at construction (signals still pending are then delivered as
// that mask allows).
class ScopedSignalFd {
 public:
  explicit ScopedSignalFd(std::initializer_list<int> signals);
  ~ScopedSignalFd();
  ScopedSignalFd(const ScopedSignalFd&) = delete;
  ScopedSignalFd& operator=(const ScopedSignalFd&) = delete;

  int fd() const { return fd_.get(); }
  // The signals waiting on the fd now, in arrival order; reads until none is left.
  std::vector<int> take();

 private:
  sigset_t previous_{};
  UniqueFd fd_;
};

// Ignores `sig` (SIGPIPE: a write to a pipe whose reader died fails with EPIPE instead of
// killing the launcher) until destroyed, then restores the previous disposition.
class ScopedIgnoredSignal {
 public:
  explicit ScopedIgnoredSignal(int sig);
  ~ScopedIgnoredSignal();
  ScopedIgnoredSignal(const ScopedIgnoredSignal&) = delete;
  ScopedIgnoredSignal& operator=(const ScopedIgnoredSignal&) = delete;

 private:
  int sig_;
  struct sigaction previous_{};
};

}  // namespace runrun::launcher
