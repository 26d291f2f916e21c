// close_in_forked_children: a registered fd is closed in a child forked while it is registered,
// and stays open in the parent; an unregistered one stays open in the child too. The child
// checks with fcntl and reports through its exit status (only async-signal-safe calls there).
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fork_generation.h"

namespace {

// Forks a child that exits 0 when `fd` is open there, 1 when it is closed; returns that code.
int child_sees_fd_open(int fd) {
  const pid_t pid = fork();
  if (pid == 0) _exit(fcntl(fd, F_GETFD) >= 0 ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("a registered fd is closed in forked children only while registered", "[core][fork]") {
  int pair[2] = {-1, -1};
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  runrun::close_in_forked_children(pair[0]);
  CHECK(child_sees_fd_open(pair[0]) == 1);  // closed in the child
  CHECK(child_sees_fd_open(pair[1]) == 0);  // never registered
  CHECK(fcntl(pair[0], F_GETFD) >= 0);      // the parent's stays open
  runrun::keep_in_forked_children(pair[0]);
  CHECK(child_sees_fd_open(pair[0]) == 0);
  close(pair[0]);
  close(pair[1]);
}
