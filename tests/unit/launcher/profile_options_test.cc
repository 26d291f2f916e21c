// runrun --profile's flags become the ranks' RUNRUN_PROFILE* variables (docs/profiling.md).
#include <catch2/catch.hpp>

#include <sstream>

#include "common/errors.h"
#include "launcher/options/command_line.h"

using namespace runrun::launcher;
using Args = std::vector<std::string>;

namespace {

std::string variable(const Args& args, const std::string& name) {
  std::ostringstream out;
  const auto parsed = parse_command_line(args, {}, out);
  for (const auto& [key, value] : parsed.options.knob_values) {
    if (key == name) return value;
  }
  return "<unset>";
}

std::string error_of(const Args& args) {
  std::ostringstream out;
  try {
    parse_command_line(args, {}, out);
  } catch (const runrun::InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("profile: --profile sets RUNRUN_PROFILE and its interval and output") {
  const Args args{
      "--profile", "--profile-interval", "100", "--profile-output", "p.jsonl", "-np", "2", "python",
      "t.py"};
  CHECK(variable(args, "RUNRUN_PROFILE") == "1");
  CHECK(variable(args, "RUNRUN_PROFILE_INTERVAL") == "100");
  CHECK(variable(args, "RUNRUN_PROFILE_OUTPUT") == "p.jsonl");
  CHECK(variable({"-np", "2", "python", "t.py"}, "RUNRUN_PROFILE") == "<unset>");
}

TEST_CASE("profile: its flags are validated") {
  CHECK_THAT(error_of({"--profile-interval", "5", "-np", "1", "true"}),
             Catch::Contains("--profile-interval applies to --profile"));
  CHECK_THAT(error_of({"--profile", "--profile-interval", "0", "-np", "1", "true"}),
             Catch::Contains("--profile-interval must be a whole number of steps >= 1"));
  CHECK_THAT(error_of({"--profile", "--profile-interval", "ten", "-np", "1", "true"}),
             Catch::Contains("got 'ten'"));
}
