#include <catch2/catch.hpp>

#include "launcher/processes/mpirun_reports.h"

using namespace runrun::launcher;

TEST_CASE("mpirun's crash report is recognized by its first and last lines and signal") {
  const std::vector<std::string> report = {
      "[vm:15935] *** Process received signal ***", "[vm:15935] Signal: Segmentation fault (11)",
      "[vm:15935] [ 1] /lib/x86_64-linux-gnu/libpmix.so.2(PMIx_Finalize+0x703)[0x7f1494a50e83]",
      "[vm:15935] *** End of error message ***"};
  CHECK(starts_crash_report(report[0]));
  CHECK_FALSE(starts_crash_report(report[1]));
  CHECK(ends_crash_report(report[3]));
  CHECK_FALSE(ends_crash_report(report[0]));
  CHECK(crash_signal(report) == "Segmentation fault (11)");
  CHECK(crash_signal({}) == "a signal");
  CHECK_FALSE(starts_crash_report("*** Process received signal ***"));  // a rank's, untagged
}

TEST_CASE("the node of a daemon mpirun lost") {
  const std::vector<std::string> box = {
      "ORTE has lost communication with a remote daemon.",
      "",
      "  HNP daemon   : [[15802,0],0] on node vm",
      "  Remote daemon: [[15802,0],2] on node ns2",
      "",
      "This is usually due to either a failure of the TCP network"};
  CHECK(lost_daemon_node(box) == std::optional<std::string>("ns2"));
  CHECK_FALSE(lost_daemon_node({"mpirun noticed that process rank 1 with PID 7 on node a"}));
  CHECK(host_index_of_node("ns2", {"ns1", "ns2"}) == 1);
  CHECK(host_index_of_node("ns2.example.com", {"ns1", "ns2"}) == 1);
  CHECK(host_index_of_node("ns3", {"ns1", "ns2"}) == -1);
}
