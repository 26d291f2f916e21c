// runrun --check-network's judgement of what it measured: outliers, the slow host, the
// --min-bandwidth verdict and the table (tools/check_network/network_report.h).
#include <catch2/catch.hpp>

#include "tools/check_network/network_report.h"

using namespace runrun::check_network;

namespace {

NetworkCheck three_hosts(double ab, double ac, double bc) {
  NetworkCheck check;
  check.transport = "gloo";
  check.hosts = {"a", "b", "c"};
  check.pairs = {{0, 1, 50, ab, ab}, {0, 2, 50, ac, ac}, {1, 2, 50, bc, bc}};
  return check;
}

}  // namespace

TEST_CASE("a pair far below the others is named with the others' bandwidth") {
  const auto check = three_hosts(9.1, 9.2, 0.9);
  CHECK(outlier_pairs(check) == std::vector<std::size_t>{2});
  CHECK(verdict(check) ==
        "host b <-> c: 0.900 Gbit/s, others 9.15 Gbit/s - check --network-interface and the "
        "link between them");
}

TEST_CASE("healthy pairs spread by noise are not outliers; the pair far below them is") {
  // Measured under load: the unshaped pairs vary ninefold, the shaped one is 40x below them.
  const auto check = three_hosts(17.3, 1.86, 0.046);
  CHECK(outlier_pairs(check) == std::vector<std::size_t>{2});
  CHECK(outlier_pairs(three_hosts(17.3, 1.86, 5.0)).empty());
}

TEST_CASE("a pair's bandwidth is its slower direction") {
  auto check = three_hosts(9.1, 9.2, 9.0);
  check.pairs[2].gbit_b_to_a = 0.1;
  CHECK(outlier_pairs(check) == std::vector<std::size_t>{2});
}

TEST_CASE("a host slow with every other host is named as the host") {
  NetworkCheck check;
  check.transport = "mpi";
  check.hosts = {"a", "b", "c", "d"};
  for (int x = 0; x < 4; ++x) {
    for (int y = x + 1; y < 4; ++y) {
      const double g = (x == 3 || y == 3) ? 1.0 : 10.0;
      check.pairs.push_back({x, y, 30, g, g});
    }
  }
  CHECK_THAT(verdict(check), Catch::StartsWith("host d is slow with every other host: 1.00 - "
                                               "1.00 Gbit/s, others 10.0 Gbit/s"));
}

TEST_CASE("with three hosts, one slow host makes two slow pairs: the host is named") {
  CHECK(verdict(three_hosts(9.1, 0.5, 0.6)) ==
        "host c is slow with every other host: 0.500 - 0.600 Gbit/s, others 9.10 Gbit/s - check "
        "c's interface (--network-interface) and its link");
}

TEST_CASE("no outlier: the range is given") {
  CHECK(verdict(three_hosts(9.1, 8.0, 9.5)) ==
        "no outlier: every pair between 8.00 and 9.50 Gbit/s");
  NetworkCheck one;
  one.hosts = {"a"};
  CHECK_THAT(verdict(one), Catch::StartsWith("one host"));
}

TEST_CASE("min-bandwidth: names every pair below it and marks them in the table") {
  auto check = three_hosts(9.1, 9.2, 0.9);
  CHECK(pairs_below_minimum(check).empty());  // not given
  check.min_bandwidth_gbit = 5;
  CHECK(pairs_below_minimum(check) == std::vector<std::size_t>{2});
  check.allreduce = {{1 << 20, 0.001, 8.4, 11.2}};
  const std::string report = format_report(check);
  CHECK_THAT(report, Catch::Contains("b <-> c     50.0          0.900      0.900       <- outlier "
                                     "below-minimum"));
  CHECK_THAT(report, Catch::Contains("1 MiB     1.000       8.40          11.2"));
  CHECK_THAT(report, Catch::Contains("below --min-bandwidth 5.00 Gbit/s: b <-> c (0.900)"));
}
