// The launcher's child-process helpers (launcher/processes/child_io.h) on real pipes and children.
#include "launcher/processes/child_io.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace {

using runrun::launcher::read_available;
using runrun::launcher::reap_if_exited;
using runrun::launcher::UniqueFd;
using runrun::launcher::wait_for_exit;
using runrun::launcher::write_block;

struct Pipe {
  UniqueFd read_end, write_end;
  Pipe() {
    int ends[2];
    REQUIRE(pipe2(ends, O_CLOEXEC) == 0);
    read_end.reset(ends[0]);
    write_end.reset(ends[1]);
  }
};

}  // namespace

TEST_CASE("launcher/child_io: read_available returns what is there, never waits, closes at EOF") {
  Pipe pipe;
  char buffer[4];
  // Nothing written yet: returns at once (the pipe is blocking; a read would wait).
  CHECK(read_available(pipe.read_end, buffer).empty());
  CHECK(pipe.read_end.valid());

  REQUIRE(write(pipe.write_end.get(), "abcdef", 6) == 6);
  CHECK(read_available(pipe.read_end, buffer) == "abcd");  // as much as the buffer holds
  CHECK(read_available(pipe.read_end, buffer) == "ef");    // the rest, partial
  CHECK(read_available(pipe.read_end, buffer).empty());    // drained, still open
  CHECK(pipe.read_end.valid());

  REQUIRE(write(pipe.write_end.get(), "g", 1) == 1);
  pipe.write_end.reset();
  CHECK(read_available(pipe.read_end, buffer) == "g");  // data before the end of file
  CHECK(pipe.read_end.valid());
  CHECK(read_available(pipe.read_end, buffer).empty());
  CHECK_FALSE(pipe.read_end.valid());                    // closed at the end of file
  CHECK(read_available(pipe.read_end, buffer).empty());  // and a closed one reads nothing
}

TEST_CASE("launcher/child_io: write_block fills a pipe beyond its default size") {
  Pipe pipe;
  const std::string block(200000, 'x');  // above 64 KiB: the pipe is grown first
  write_block(pipe.write_end.get(), block);
  std::string got;
  char buffer[65536];
  pipe.write_end.reset();
  while (pipe.read_end.valid()) got += read_available(pipe.read_end, buffer);
  CHECK(got == block);
}

TEST_CASE("launcher/child_io: write_block stops when the reader is gone") {
  Pipe pipe;
  struct sigaction ignore{}, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  pipe.read_end.reset();
  write_block(pipe.write_end.get(), "environment");  // EPIPE: returns
  sigaction(SIGPIPE, &previous, nullptr);
  SUCCEED();
}

TEST_CASE("launcher/child_io: a child is reaped with its status, waiting or not") {
  int go[2];
  REQUIRE(pipe2(go, O_CLOEXEC) == 0);
  const pid_t child = fork();
  if (child == 0) {
    close(go[1]);
    char byte = 0;
    (void)!read(go[0], &byte, 1);  // runs until told to exit
    _exit(3);
  }
  close(go[0]);
  CHECK_FALSE(reap_if_exited(child).has_value());  // still running
  close(go[1]);
  const auto status = wait_for_exit(child);
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 3);
  CHECK_FALSE(wait_for_exit(child).has_value());  // reaped already
  CHECK_FALSE(reap_if_exited(child).has_value());

  const pid_t killed = fork();
  if (killed == 0) {
    pause();
    _exit(0);
  }
  kill(killed, SIGKILL);
  std::optional<int> reaped;
  for (int tries = 0; tries < 2000 && !reaped; ++tries) {
    reaped = reap_if_exited(killed);
    if (!reaped) usleep(1000);
  }
  REQUIRE(reaped.has_value());
  CHECK(WIFSIGNALED(*reaped));
  CHECK(WTERMSIG(*reaped) == SIGKILL);
  CHECK_FALSE(reap_if_exited(-1).has_value());
  CHECK_FALSE(wait_for_exit(0).has_value());
}
