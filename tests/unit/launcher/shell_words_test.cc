#include <catch2/catch.hpp>

#include "common/errors.h"
#include "launcher/remote/shell_words.h"

using namespace runrun::launcher;

TEST_CASE("shell quoting only where needed") {
  CHECK(shell_quote("python") == "python");
  CHECK(shell_quote("a:2,b:2") == "a:2,b:2");
  CHECK(shell_quote("print(1)") == "'print(1)'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_join({"python", "-c", "print(1)"}) == "python -c 'print(1)'");
}

TEST_CASE("split_shell_words handles quotes and escapes") {
  CHECK(split_shell_words("--mca btl self,tcp", "x") ==
        std::vector<std::string>{"--mca", "btl", "self,tcp"});
  CHECK(split_shell_words("  -x 'A B'  \"C \\\"D\\\"\" e\\ f ", "x") ==
        std::vector<std::string>{"-x", "A B", "C \"D\"", "e f"});
  CHECK(split_shell_words("", "x").empty());
  CHECK_THROWS_WITH(split_shell_words("--mca 'oops", "--mpi-args"),
                    Catch::Contains("--mpi-args") && Catch::Contains("unterminated ' quote"));
  CHECK_THROWS_AS(split_shell_words("\"oops", "--mpi-args"), runrun::InvalidArgumentError);
}
