#include "launcher/processes/signal_scope.h"

#include <sys/signalfd.h>
#include <unistd.h>

namespace runrun::launcher {

ScopedSignalFd::ScopedSignalFd(std::initializer_list<int> signals) {
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : signals) sigaddset(&mask, sig);
  pthread_sigmask(SIG_BLOCK, &mask, &previous_);
  fd_.reset(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
}

ScopedSignalFd::~ScopedSignalFd() {
  fd_.reset();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

std::vector<int> ScopedSignalFd::take() {
  std::vector<int> signals;
  signalfd_siginfo info{};
  while (read(fd_.get(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    signals.push_back(static_cast<int>(info.ssi_signo));
  }
  return signals;
}

ScopedIgnoredSignal::ScopedIgnoredSignal(int sig) : sig_(sig) {
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  sigaction(sig_, &ignore, &previous_);
}

ScopedIgnoredSignal::~ScopedIgnoredSignal() { sigaction(sig_, &previous_, nullptr); }

}  // namespace runrun::launcher
