// The owner-thread checks (common/debug_checks.h): on in the test build; a call from another
// thread than the owner's aborts the process with a message naming the contract, the file and
// line and both threads (run in a forked child, whose stderr and end the test reads); a planned
// hand-over (release()) is no violation.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "common/debug_checks.h"

namespace runrun {
namespace {

struct ChildEnd {
  int status = 0;
  std::string stderr_text;
};

// Runs `body` in a forked child with its stderr captured; the child exits 0 after it.
template <typename Body>
ChildEnd run_in_child(Body body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildEnd end;
  char buffer[512];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buffer, sizeof(buffer))) > 0) {
    end.stderr_text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  REQUIRE(::waitpid(child, &end.status, 0) == child);
  return end;
}

TEST_CASE("debug checks are compiled into the test build", "[debug_checks]") {
  REQUIRE(kDebugChecks);
}

TEST_CASE("a call from a thread that does not own the state aborts, naming the contract",
          "[debug_checks]") {
  const ChildEnd end = run_in_child([] {
    OwnerThread owner;
    RUNRUN_CHECK_OWNER_THREAD(owner);  // binds this thread
    RUNRUN_CHECK_OWNER_THREAD(owner);  // the owner again: fine
    std::thread other([&owner] { RUNRUN_CHECK_OWNER_THREAD(owner); });
    other.join();
  });
  INFO(end.stderr_text);
  REQUIRE(WIFSIGNALED(end.status));
  CHECK(WTERMSIG(end.status) == SIGABRT);
  CHECK(end.stderr_text.find("runrun: debug check failed at ") != std::string::npos);
  CHECK(end.stderr_text.find("debug_checks_test.cc") != std::string::npos);
  CHECK(end.stderr_text.find("owner-thread contract") != std::string::npos);
  CHECK(end.stderr_text.find("but owner belongs to thread") != std::string::npos);
}

TEST_CASE("the owner's own calls and a released hand-over pass", "[debug_checks]") {
  const ChildEnd end = run_in_child([] {
    OwnerThread owner;
    std::thread first([&owner] { RUNRUN_CHECK_OWNER_THREAD(owner); });
    first.join();
    owner.release();  // the state is handed over: the next thread to check owns it
    RUNRUN_CHECK_OWNER_THREAD(owner);
    RUNRUN_CHECK_OWNER_THREAD(owner);
  });
  INFO(end.stderr_text);
  REQUIRE(WIFEXITED(end.status));
  CHECK(WEXITSTATUS(end.status) == 0);
  CHECK(end.stderr_text.empty());
}

TEST_CASE("RUNRUN_DCHECK aborts with what failed", "[debug_checks]") {
  const ChildEnd end = run_in_child([] {
    const int ranks = 3;
    RUNRUN_DCHECK(ranks == 3, "not reached");
    RUNRUN_DCHECK(ranks % 2 == 0, "an even number of ranks");
  });
  INFO(end.stderr_text);
  REQUIRE(WIFSIGNALED(end.status));
  CHECK(end.stderr_text.find("ranks % 2 == 0 (an even number of ranks)") != std::string::npos);
}

}  // namespace
}  // namespace runrun
