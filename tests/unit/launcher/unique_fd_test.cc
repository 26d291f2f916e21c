// The launcher's owning file descriptor (launcher/processes/unique_fd.h): closed when its owner
// goes,
// moved without being closed, given up by release().
#include "launcher/processes/unique_fd.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace {

using runrun::launcher::UniqueFd;

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

int open_null() { return open("/dev/null", O_RDONLY | O_CLOEXEC); }

}  // namespace

TEST_CASE("launcher/unique_fd: the destructor closes the descriptor") {
  const int raw = open_null();
  REQUIRE(raw >= 0);
  {
    const UniqueFd fd(raw);
    CHECK(fd.valid());
    CHECK(fd.get() == raw);
    CHECK(is_open(raw));
  }
  CHECK_FALSE(is_open(raw));
  const UniqueFd none;
  CHECK_FALSE(none.valid());
  CHECK(none.get() == -1);
}

TEST_CASE("launcher/unique_fd: a move hands the descriptor over, open, to one owner") {
  const int raw = open_null();
  REQUIRE(raw >= 0);
  UniqueFd first(raw);
  UniqueFd second(std::move(first));
  CHECK_FALSE(first.valid());  // NOLINT(bugprone-use-after-move): moved-from is empty
  CHECK(second.get() == raw);
  CHECK(is_open(raw));

  const int other_raw = open_null();
  REQUIRE(other_raw >= 0);
  UniqueFd third(other_raw);
  third = std::move(second);  // closes what third held
  CHECK_FALSE(is_open(other_raw));
  CHECK(third.get() == raw);
  CHECK(is_open(raw));
  third = std::move(third);  // self-move keeps it
  CHECK(third.get() == raw);
  CHECK(is_open(raw));
  third.reset();
  CHECK_FALSE(is_open(raw));
}

TEST_CASE("launcher/unique_fd: release gives the descriptor up, reset replaces it") {
  const int raw = open_null();
  REQUIRE(raw >= 0);
  int released = -1;
  {
    UniqueFd fd(raw);
    released = fd.release();
    CHECK_FALSE(fd.valid());
  }
  CHECK(released == raw);
  CHECK(is_open(raw));  // not closed by the destructor

  UniqueFd fd(raw);
  const int next = open_null();
  REQUIRE(next >= 0);
  fd.reset(next);
  CHECK_FALSE(is_open(raw));
  CHECK(fd.get() == next);
  fd.reset(next);  // the same descriptor again: kept open
  CHECK(is_open(next));
  fd.reset();
  CHECK_FALSE(is_open(next));
  CHECK_FALSE(fd.valid());
}
