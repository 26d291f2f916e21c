// The reaper a failed rank's shim leaves for Open MPI's daemon
// (launcher/processes/daemon_reaper.h), with
// real processes standing in for the daemon: a child of this test, watched through a pidfd.
#include "launcher/processes/daemon_reaper.h"

#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include "launcher/processes/child_io.h"

namespace {

using runrun::launcher::daemon_reaper_grace_ms;
using runrun::launcher::is_open_mpi_daemon;
using runrun::launcher::leave_daemon_reaper;

// A stand-in daemon: sleeps `seconds`, ignoring SIGTERM when asked to.
pid_t start_daemon(int seconds, bool ignore_term) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (ignore_term) signal(SIGTERM, SIG_IGN);
    sleep(static_cast<unsigned>(seconds));
    _exit(7);
  }
  return pid;
}

int pidfd_of(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

TEST_CASE("launcher/daemon_reaper: only Open MPI's daemons are watched") {
  CHECK(is_open_mpi_daemon("orted"));
  CHECK(is_open_mpi_daemon("prted"));
  CHECK_FALSE(is_open_mpi_daemon("mpirun"));
  CHECK_FALSE(is_open_mpi_daemon("runrun"));
  CHECK_FALSE(is_open_mpi_daemon("orted2"));
  CHECK_FALSE(is_open_mpi_daemon(""));
  // The test process itself is no daemon: its children get no watch.
  CHECK_FALSE(runrun::launcher::watch_open_mpi_daemon(getpid()).valid());
}

TEST_CASE("launcher/daemon_reaper: the grace is the peer timeout within 5-10 s") {
  CHECK(daemon_reaper_grace_ms(nullptr) == 10000);  // RUNRUN_PEER_TIMEOUT's default, 30 s
  CHECK(daemon_reaper_grace_ms("") == 10000);
  CHECK(daemon_reaper_grace_ms("0") == 10000);  // monitoring off: the default still bounds it
  CHECK(daemon_reaper_grace_ms("nonsense") == 10000);
  CHECK(daemon_reaper_grace_ms("-4") == 10000);
  CHECK(daemon_reaper_grace_ms("inf") == 10000);
  CHECK(daemon_reaper_grace_ms("3") == 5000);
  CHECK(daemon_reaper_grace_ms("7.5") == 7500);
  CHECK(daemon_reaper_grace_ms("120") == 10000);
}

// Starts a stand-in daemon, leaves a reaper for it with `grace_ms`, and returns the daemon's
// wait status.
int status_after_reaper(int daemon_seconds, bool ignore_term, long grace_ms) {
  const pid_t daemon = start_daemon(daemon_seconds, ignore_term);
  REQUIRE(daemon > 0);
  runrun::launcher::UniqueFd pidfd(pidfd_of(daemon));
  REQUIRE(pidfd.valid());
  leave_daemon_reaper(std::move(pidfd), grace_ms);
  // The wait is bounded by the daemon's own sleep.
  const auto status = runrun::launcher::wait_for_exit(daemon);
  REQUIRE(status.has_value());
  return *status;
}

TEST_CASE("launcher/daemon_reaper: a daemon still there after the grace is ended") {
  const int status = status_after_reaper(60, false, 200);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("launcher/daemon_reaper: a daemon that ignores SIGTERM is killed") {
  const int status = status_after_reaper(60, true, 200);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("launcher/daemon_reaper: a daemon that ends within the grace is left alone") {
  const int status = status_after_reaper(1, false, 20000);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
}
