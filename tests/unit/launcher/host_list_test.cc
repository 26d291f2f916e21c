#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "common/errors.h"
#include "launcher/hosts/host_list.h"

using runrun::InvalidArgumentError;
using namespace runrun::launcher;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("option -H entries with and without slots") {
  CHECK(parse_host_list("a:2,b:3") == std::vector<HostSlots>{{"a", 2}, {"b", 3}});
  CHECK(parse_host_list("node-1.example.com") == std::vector<HostSlots>{{"node-1.example.com", 1}});
  CHECK(parse_host_list(" a:1 , b ") == std::vector<HostSlots>{{"a", 1}, {"b", 1}});
  CHECK(parse_host_list("[::1]:4,[fe80::1]") == std::vector<HostSlots>{{"::1", 4}, {"fe80::1", 1}});
}

TEST_CASE("malformed -H entries name the entry and the reason") {
  const auto err = [](const char* text) { return error_of([&] { parse_host_list(text); }); };
  CHECK_THAT(err("a:0"), Catch::Contains("'a:0'") && Catch::Contains("between 1 and"));
  CHECK_THAT(err("a:x"), Catch::Contains("'a:x'") && Catch::Contains("positive integer"));
  CHECK_THAT(err("a:"), Catch::Contains("followed by the number of slots"));
  CHECK_THAT(err(":4"), Catch::Contains("host name is empty"));
  CHECK_THAT(err("a:2,,b:2"), Catch::Contains("empty entry"));
  CHECK_THAT(err("a:2:3"), Catch::Contains("more than one ':'"));
  CHECK_THAT(err("a b:2"), Catch::Contains("contains ' '"));
  CHECK_THAT(err("[::1:2"), Catch::Contains("closing ']'"));
  CHECK_THAT(err("[::1]2"), Catch::Contains("expected ':N' after ']'"));
  CHECK_THAT(err(""), Catch::Contains("-H/--hosts is empty"));
  CHECK_THAT(err("a:-1"), Catch::Contains("between 1 and"));
}

TEST_CASE("hostfile formats, comments and blank lines") {
  const auto hosts = parse_hostfile(
      "# cluster\n\nalpha slots=4\nbeta:2   # trailing comment\n  gamma\n\t\n[::1] slots=2\n",
      "hosts.txt");
  CHECK(hosts == std::vector<HostSlots>{{"alpha", 4}, {"beta", 2}, {"gamma", 1}, {"::1", 2}});
  // --slots-per-host: the slots of a bare host (a discovery script's output).
  CHECK(parse_hostfile("a\nb:2\nc slots=3\n[::1]\n", "discovered", 4) ==
        std::vector<HostSlots>{{"a", 4}, {"b", 2}, {"c", 3}, {"::1", 4}});
}

TEST_CASE("malformed hostfile lines name file, line number and line") {
  const auto err = [](const char* text) {
    return error_of([&] { parse_hostfile(text, "hosts.txt"); });
  };
  CHECK_THAT(err("a slots=2\nb slots=x\n"),
             Catch::Contains("hostfile hosts.txt line 2 'b slots=x'") &&
                 Catch::Contains("positive integer"));
  CHECK_THAT(err("a max_slots=2"),
             Catch::Contains("line 1") && Catch::Contains("unknown attribute 'max_slots=2'"));
  CHECK_THAT(err("a:2 slots=3"), Catch::Contains("slots given twice"));
  CHECK_THAT(err("\n\nb:0"), Catch::Contains("line 3"));
  CHECK_THAT(err("# only a comment\n"), Catch::Contains("lists no host"));
}

TEST_CASE("read_hostfile reads a file and names a missing one") {
  const std::string path = "launcher_test_hostfile.txt";
  std::ofstream(path) << "x slots=2\ny:1\n";
  CHECK(read_hostfile(path) == std::vector<HostSlots>{{"x", 2}, {"y", 1}});
  std::remove(path.c_str());
  CHECK_THAT(error_of([&] { read_hostfile(path); }),
             Catch::Contains("cannot read hostfile 'launcher_test_hostfile.txt'"));
}

TEST_CASE("processes fill slots in host order") {
  const std::vector<HostSlots> hosts = {{"a", 4}, {"b", 4}, {"c", 2}};
  CHECK(total_slots(hosts) == 10);
  CHECK(hosts_for_processes(hosts, 6) == std::vector<HostSlots>{{"a", 4}, {"b", 2}});
  CHECK(hosts_for_processes(hosts, 10) == hosts);
  CHECK(hosts_for_processes(hosts, 1) == std::vector<HostSlots>{{"a", 1}});
  CHECK(format_host_list({{"a", 4}, {"::1", 2}}) == "a:4,[::1]:2");
}
