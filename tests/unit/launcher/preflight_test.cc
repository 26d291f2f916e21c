#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>

#include "common/errors.h"
#include "launcher/hosts/local_host.h"
#include "launcher/preflight.h"

using namespace runrun::launcher;
using Args = std::vector<std::string>;

namespace {
LaunchOptions options_with(int np, std::vector<HostSlots> hosts) {
  LaunchOptions options;
  options.num_proc = np;
  options.hosts = std::move(hosts);
  options.hosts_source = "-H test";
  options.command = {"x"};
  return options;
}
}  // namespace

TEST_CASE("option -np must be between 1 and the slots") {
  CHECK_NOTHROW(check_process_count(options_with(4, {{"a", 2}, {"b", 2}})));
  CHECK_NOTHROW(check_process_count(options_with(3, {{"a", 2}, {"b", 2}})));
  CHECK_THROWS_WITH(check_process_count(options_with(0, {{"a", 2}})),
                    Catch::Contains("no -np given (or -np 0): give the number of processes"));
  CHECK_THROWS_WITH(check_process_count(options_with(-2, {{"a", 2}})),
                    Catch::Contains("-np must be at least 1 (got -2)"));
  CHECK_THROWS_WITH(check_process_count(options_with(5, {{"a", 2}, {"b", 2}})),
                    Catch::Contains("-np 5 is more than the 4 slots given by -H test"));
}

TEST_CASE("a missing command") {
  auto options = options_with(1, {{"a", 1}});
  options.command.clear();
  CHECK_THROWS_WITH(check_command(options), Catch::Contains("no command given"));
}

TEST_CASE("local names are recognised") {
  const LocalHostNames local({"myhost", "myhost.example.com", "192.0.2.7"});
  for (const char* name : {"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "myhost",
                           "MyHost.Example.com", "192.0.2.7"}) {
    CHECK(local.is_local(name));
  }
  for (const char* name : {"otherhost", "192.0.2.8", "10.0.0.1", "myhost2"}) {
    CHECK_FALSE(local.is_local(name));
  }
  const auto detected = LocalHostNames::detect();
  CHECK(detected.is_local("localhost"));
  CHECK_FALSE(detected.names().empty());
}

TEST_CASE("duplicate hosts, by name or as two names of this machine") {
  const LocalHostNames local({"myhost"});
  CHECK_NOTHROW(check_duplicate_hosts({{"a", 1}, {"b", 1}, {"localhost", 2}}, local));
  CHECK_THROWS_WITH(check_duplicate_hosts({{"a", 1}, {"b", 1}, {"A", 2}}, local),
                    Catch::Contains("host 'A' is listed twice"));
  CHECK_THROWS_WITH(check_duplicate_hosts({{"localhost", 1}, {"myhost", 1}}, local),
                    Catch::Contains("'localhost' and 'myhost' are both this machine"));
}

TEST_CASE("network interfaces: names of this machine or CIDR blocks") {
  const Args interfaces = {"lo", "eth0"};
  CHECK_NOTHROW(check_network_interfaces("", interfaces));
  CHECK_NOTHROW(check_network_interfaces("eth0", interfaces));
  CHECK_NOTHROW(check_network_interfaces("lo,10.0.0.0/8,fd00::/64", interfaces));
  CHECK_THROWS_WITH(check_network_interfaces("eth9", interfaces),
                    Catch::Contains("'eth9' is not an interface") && Catch::Contains("lo, eth0"));
  CHECK_THROWS_WITH(check_network_interfaces("10.0.0.0/33", interfaces),
                    Catch::Contains("not a CIDR block"));
  CHECK_THROWS_WITH(check_network_interfaces("nonsense/8", interfaces),
                    Catch::Contains("not a CIDR block"));
  CHECK_FALSE(local_interface_names().empty());
}

TEST_CASE("the remote check command: ssh with options, or the agent") {
  LaunchOptions options = options_with(1, {{"a", 1}});
  CHECK(remote_check_command("h1", options, 5) ==
        Args{"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "h1", "true"});
  options.ssh_port = 2222;
  options.ssh_identity_file = "/k/id";
  CHECK(remote_check_command("h1", options, 3) == Args{"ssh", "-o", "BatchMode=yes", "-o",
                                                       "ConnectTimeout=3", "-p", "2222", "-i",
                                                       "/k/id", "h1", "true"});
  options.rsh_agent = "/t/agent.sh --quiet";
  CHECK(remote_check_command("h1", options, 3) == Args{"/t/agent.sh", "--quiet", "h1", "true"});
}

TEST_CASE("unreachable hosts are all named with the remote shell's error") {
  LaunchOptions options = options_with(2, {{"a", 1}, {"b", 1}});
  // An agent that fails for host "bad*" with a message, like ssh would.
  options.rsh_agent =
      "sh -c 'case \"$0\" in bad*) echo \"Permission denied (publickey) for $0\" >&2; exit 255;; "
      "esac'";
  CHECK_NOTHROW(check_remote_hosts({"good1", "good2"}, options, 5));
  try {
    check_remote_hosts({"good1", "bad1", "bad2"}, options, 5);
    FAIL("no error");
  } catch (const runrun::InvalidArgumentError& e) {
    const std::string message = e.what();
    CHECK_THAT(message, Catch::Contains("host 'bad1': Permission denied (publickey) for bad1"));
    CHECK_THAT(message, Catch::Contains("host 'bad2': Permission denied (publickey) for bad2"));
    CHECK_THAT(message, !Catch::Contains("good1"));
  }
  options.rsh_agent = "/nonexistent/agent";
  CHECK_THROWS_WITH(check_remote_hosts({"h"}, options, 5),
                    Catch::Contains("host 'h': cannot run /nonexistent/agent"));
}

TEST_CASE("mpirun missing from PATH names the package") {
  CHECK_THROWS_WITH(
      find_open_mpi_mpirun({{"PATH", "/nonexistent"}}),
      Catch::Contains("mpirun was not found on PATH") && Catch::Contains("openmpi-bin"));
  CHECK_THROWS_WITH(find_open_mpi_mpirun({}), Catch::Contains("openmpi-bin"));
}

TEST_CASE("the command must be a program found on the ranks' PATH, or an executable path") {
  CHECK_NOTHROW(check_program_found("sh", "/nonexistent:/bin:/usr/bin"));
  CHECK_NOTHROW(check_program_found("/bin/sh", ""));
  CHECK_THROWS_WITH(check_program_found("sh", "/nonexistent"),
                    Catch::Contains("command 'sh' was not found on PATH (/nonexistent)") &&
                        Catch::Contains("./sh"));
  CHECK_THROWS_WITH(check_program_found("/nonexistent/train", "/bin"),
                    Catch::Contains("command '/nonexistent/train' does not exist"));
  CHECK_THROWS_WITH(check_program_found("/tmp", "/bin"), Catch::Contains("is a directory"));
  char plain[] = "/tmp/runrun_preflight_XXXXXX";  // mode 0600: not executable
  const int fd = mkstemp(plain);
  REQUIRE(fd >= 0);
  close(fd);
  CHECK_THROWS_WITH(check_program_found(plain, "/bin"),
                    Catch::Contains("is not an executable file") && Catch::Contains("chmod +x"));
  unlink(plain);
  // A directory on PATH named like the program is not the program.
  CHECK_THROWS_WITH(check_program_found("tmp", "/"), Catch::Contains("not found on PATH"));
}
