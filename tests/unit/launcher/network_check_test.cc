// runrun --check-network's launcher side: its flags, the measuring job it starts, and how it
// reads that job's report back (the measuring itself: tests/integration/launcher/
// check_network.sh, over network-namespace hosts).
#include <catch2/catch.hpp>

#include <sstream>

#include "common/errors.h"
#include "launcher/options/command_line.h"
#include "launcher/network_check.h"

using namespace runrun::launcher;
using Args = std::vector<std::string>;

namespace {

LaunchOptions parse(const Args& args) {
  std::ostringstream out;
  const auto parsed = parse_command_line(args, {}, out);
  REQUIRE(parsed.action == ParsedCommandLine::Action::kRun);
  return parsed.options;
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

TEST_CASE("check-network: alone needs no command and no -np") {
  const auto options = parse({"--check-network", "-H", "a:4,b:4", "--min-bandwidth", "2.5"});
  CHECK(options.network_check.enabled);
  REQUIRE(options.network_check.min_bandwidth_gbit);
  CHECK(*options.network_check.min_bandwidth_gbit == 2.5);
  CHECK(options.command.empty());
}

TEST_CASE("check-network: before a training command keeps the command") {
  const auto options = parse({"--check-network", "-np", "4", "-H", "a:2,b:2", "python", "t.py"});
  CHECK(options.network_check.enabled);
  CHECK(options.command == Args{"python", "t.py"});
  CHECK(!options.network_check.min_bandwidth_gbit);
}

TEST_CASE("check-network: its flags are validated") {
  CHECK_THAT(error_of({"--min-bandwidth", "1", "-H", "a,b"}),
             Catch::Contains("--min-bandwidth applies to --check-network"));
  CHECK_THAT(error_of({"--check-network", "--min-bandwidth", "fast"}),
             Catch::Contains("--min-bandwidth must be a number above 0"));
  CHECK_THAT(error_of({"--check-network", "--check-network-seconds", "0"}),
             Catch::Contains("--check-network-seconds must be a number above 0"));
}

TEST_CASE("the measuring job runs one process per host the job uses") {
  auto options = parse({"--check-network", "-np", "5", "-H", "a:4,b:4,c:4", "--min-bandwidth",
                        "1.5", "--output-filename", "out", "python", "t.py"});
  const LaunchOptions check = network_check_job(options, "/opt/bin/runrun-check-network", 0.25);
  REQUIRE(check.hosts.size() == 2);  // -np 5 uses a and b only
  CHECK(check.hosts[0].name == "a");
  CHECK(check.hosts[0].slots == 1);
  CHECK(check.num_proc == 2);
  CHECK(check.output_dir.empty());
  CHECK(check.command == Args{"/opt/bin/runrun-check-network", "--hosts", "a,b", "--budget-s",
                              "0.25", "--min-bandwidth", "1.5"});
  options.num_proc = 0;  // --check-network alone: every host
  CHECK(network_check_job(options, "x", 0.1).hosts.size() == 3);
}

TEST_CASE("the report is rank 0's stdout; its status line sets the exit status") {
  const std::string captured =
      "[0]<stdout>:runrun --check-network: 2 host(s)\n"
      "[1]<stdout>:noise from rank 1\n"
      "[0]<stdout>:verdict: one pair: 9.1 Gbit/s\n"
      "[0]<stdout>:runrun-check-network: status below-minimum link-gbit 9.5\n";
  const auto output = parse_network_check_output(captured);
  CHECK(output.report ==
        Args{"runrun --check-network: 2 host(s)", "verdict: one pair: 9.1 Gbit/s"});
  CHECK(output.below_minimum);
  CHECK(output.link_gbit == 9.5);
  CHECK(!parse_network_check_output("[0]<stdout>:runrun-check-network: status ok\n").below_minimum);
  CHECK_THROWS_WITH(parse_network_check_output("[0]<stdout>:half a report\n"),
                    Catch::Contains("printed no result"));
}
