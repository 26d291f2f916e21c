// The signal scopes of the launcher's poll loops (launcher/processes/signal_scope.h): signals
// arrive on
// the fd while the scope lasts, and the mask and SIGPIPE's disposition are restored after.
#include "launcher/processes/signal_scope.h"

#include <catch2/catch.hpp>
#include <pthread.h>
#include <signal.h>

namespace {

using runrun::launcher::ScopedIgnoredSignal;
using runrun::launcher::ScopedSignalFd;

bool blocked(int sig) {
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

}  // namespace

TEST_CASE("launcher/signal_scope: a signalfd takes the signals and the mask is restored") {
  // A mask with SIGUSR2 blocked already: the scope must leave it so.
  sigset_t usr2, outer;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, &outer);
  REQUIRE_FALSE(blocked(SIGUSR1));
  REQUIRE_FALSE(blocked(SIGWINCH));
  {
    ScopedSignalFd signals({SIGUSR1, SIGWINCH});
    REQUIRE(signals.fd() >= 0);
    CHECK(blocked(SIGUSR1));
    CHECK(blocked(SIGWINCH));
    CHECK(blocked(SIGUSR2));
    CHECK(signals.take().empty());
    pthread_kill(pthread_self(), SIGUSR1);  // blocked: it waits on the fd, not a handler
    pthread_kill(pthread_self(), SIGWINCH);
    const auto taken = signals.take();
    REQUIRE(taken.size() == 2);
    CHECK(((taken[0] == SIGUSR1 && taken[1] == SIGWINCH) ||
           (taken[0] == SIGWINCH && taken[1] == SIGUSR1)));
    CHECK(signals.take().empty());
  }
  CHECK_FALSE(blocked(SIGUSR1));
  CHECK_FALSE(blocked(SIGWINCH));
  CHECK(blocked(SIGUSR2));  // blocked before the scope: still blocked
  pthread_sigmask(SIG_SETMASK, &outer, nullptr);
}

TEST_CASE("launcher/signal_scope: SIGPIPE is ignored in the scope, its disposition restored") {
  struct sigaction before{};
  sigaction(SIGPIPE, nullptr, &before);
  {
    const ScopedIgnoredSignal ignore(SIGPIPE);
    struct sigaction now{};
    sigaction(SIGPIPE, nullptr, &now);
    CHECK(now.sa_handler == SIG_IGN);
  }
  struct sigaction after{};
  sigaction(SIGPIPE, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
}
