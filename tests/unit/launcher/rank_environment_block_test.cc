// The environment block a rank of runrun --gloo reads from its stdin: exact round trip, strict
// parsing, and a reader that stops at the terminator (the rest of stdin is the lifeline).
#include <catch2/catch.hpp>

#include <unistd.h>

#include "common/errors.h"
#include "launcher/remote/rank_environment_block.h"

using namespace runrun::launcher;

TEST_CASE("any value but NUL round-trips, empty values and '=' in values included") {
  const EnvEntries entries = {
      {"PATH", "/a:/b"}, {"EMPTY", ""}, {"EQ", "a=b=c"}, {"LINES", "one\ntwo\n"}, {"SPACE", " x "}};
  const std::string block = encode_environment_block(entries);
  CHECK(decode_environment_block(block) == entries);
  CHECK(decode_environment_block(encode_environment_block({})).empty());
}

TEST_CASE("names and values that cannot be passed, and malformed blocks, are errors") {
  CHECK_THROWS_AS(encode_environment_block({{"", "x"}}), runrun::InvalidArgumentError);
  CHECK_THROWS_AS(encode_environment_block({{"A=B", "x"}}), runrun::InvalidArgumentError);
  CHECK_THROWS_AS(encode_environment_block({{"A", std::string("x\0y", 3)}}),
                  runrun::InvalidArgumentError);
  CHECK_THROWS_WITH(decode_environment_block(std::string("A=1\0", 4)),
                    Catch::Contains("before its terminator"));
  CHECK_THROWS_WITH(decode_environment_block(std::string("A=1\0\0B", 7)),
                    Catch::Contains("after its terminator"));
  CHECK_THROWS_WITH(decode_environment_block(std::string("NOEQUALS\0\0", 10)),
                    Catch::Contains("without NAME="));
}

TEST_CASE("the reader takes exactly the block from a pipe and leaves what follows") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const std::string block = encode_environment_block({{"A", "1"}, {"B", "two"}});
  const std::string after = "rest";
  REQUIRE(write(fds[1], block.data(), block.size()) == static_cast<ssize_t>(block.size()));
  REQUIRE(write(fds[1], after.data(), after.size()) == static_cast<ssize_t>(after.size()));
  CHECK(read_environment_block(fds[0], 1000) == EnvEntries{{"A", "1"}, {"B", "two"}});
  char rest[8] = {};
  CHECK(read(fds[0], rest, sizeof(rest)) == 4);
  CHECK(std::string(rest) == "rest");
  close(fds[1]);
  close(fds[0]);
}

TEST_CASE("the reader fails on end of file and on a block that never ends") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  REQUIRE(write(fds[1], "A=1", 3) == 3);
  CHECK_THROWS_WITH(read_environment_block(fds[0], 200), Catch::Contains("did not arrive"));
  close(fds[1]);
  CHECK_THROWS_WITH(read_environment_block(fds[0], 200), Catch::Contains("end of file"));
  close(fds[0]);
}
