#include <catch2/catch.hpp>

#include "launcher/remote/mpirun_command.h"

using namespace runrun::launcher;
using Args = std::vector<std::string>;

namespace {
JobPlan basic_plan() {
  JobPlan plan;
  plan.mpirun_path = "/usr/bin/mpirun";
  plan.launcher_path = "/opt/bin/runrun";
  plan.hosts = {{"localhost", 2}};
  plan.host_labels = {"localhost"};
  plan.env.by_name = {"PATH"};
  return plan;
}
}  // namespace

TEST_CASE("single host, not root: the minimal command") {
  LaunchOptions options;
  options.num_proc = 2;
  options.command = {"python", "-c", "print(1)"};
  CHECK(build_mpirun_command(options, basic_plan()) == Args{"/usr/bin/mpirun",
                                                            "--noprefix",
                                                            "-np",
                                                            "2",
                                                            "-H",
                                                            "localhost:2",
                                                            "--bind-to",
                                                            "none",
                                                            "--map-by",
                                                            "slot",
                                                            "--tag-output",
                                                            "--mca",
                                                            "oob_tcp_keepalive_time",
                                                            "10",
                                                            "--mca",
                                                            "oob_tcp_keepalive_intvl",
                                                            "5",
                                                            "--mca",
                                                            "oob_tcp_keepalive_probes",
                                                            "2",
                                                            "-x",
                                                            "PATH",
                                                            "/opt/bin/runrun",
                                                            "--rank-shim",
                                                            "2",
                                                            "--",
                                                            "python",
                                                            "-c",
                                                            "print(1)"});
}

TEST_CASE("every translated option in its place") {
  LaunchOptions options;
  options.num_proc = 6;
  options.rsh_agent = "/t/agent.sh";
  options.ssh_port = 2222;
  options.ssh_identity_file = "/k/id rsa";
  options.network_interface = "10.1.0.0/24";
  options.mpi_args = {"--mca", "btl", "self,tcp"};
  options.command = {"./train"};
  JobPlan plan = basic_plan();
  plan.as_root = true;
  plan.peer_timeout_s = 3;
  plan.hosts = {{"a", 4}, {"b", 2}};
  plan.env.by_name = {"PATH", "RUNRUN_LOG_LEVEL"};
  plan.env.with_value = {{"RUNRUN_FUSION_THRESHOLD", "1048576"}, {"OMP_NUM_THREADS", "1"}};
  CHECK(build_mpirun_command(options, plan) == Args{"/usr/bin/mpirun",
                                                    "--allow-run-as-root",
                                                    "--noprefix",
                                                    "-np",
                                                    "6",
                                                    "-H",
                                                    "a:4,b:2",
                                                    "--bind-to",
                                                    "none",
                                                    "--map-by",
                                                    "slot",
                                                    "--tag-output",
                                                    "--mca",
                                                    "plm_rsh_agent",
                                                    "/t/agent.sh",
                                                    "--mca",
                                                    "plm_rsh_args",
                                                    "-p 2222 -i '/k/id rsa'",
                                                    "--mca",
                                                    "btl_tcp_if_include",
                                                    "10.1.0.0/24",
                                                    "--mca",
                                                    "oob_tcp_if_include",
                                                    "10.1.0.0/24",
                                                    "--mca",
                                                    "oob_tcp_keepalive_time",
                                                    "1",
                                                    "--mca",
                                                    "oob_tcp_keepalive_intvl",
                                                    "1",
                                                    "--mca",
                                                    "oob_tcp_keepalive_probes",
                                                    "1",
                                                    "-x",
                                                    "PATH",
                                                    "-x",
                                                    "RUNRUN_LOG_LEVEL",
                                                    "-x",
                                                    "RUNRUN_FUSION_THRESHOLD=1048576",
                                                    "-x",
                                                    "OMP_NUM_THREADS=1",
                                                    "--mca",
                                                    "btl",
                                                    "self,tcp",
                                                    "/opt/bin/runrun",
                                                    "--rank-shim",
                                                    "4,2",
                                                    "--",
                                                    "./train"});
}

TEST_CASE("ssh identity alone goes through plm_rsh_args") {
  LaunchOptions options;
  options.num_proc = 1;
  options.ssh_identity_file = "/k/id";
  options.command = {"x"};
  const auto argv = build_mpirun_command(options, basic_plan());
  const Args expected = {"--mca", "plm_rsh_args", "-i /k/id"};
  CHECK(std::search(argv.begin(), argv.end(), expected.begin(), expected.end()) != argv.end());
}

TEST_CASE("mpirun's daemons notice a cut link within two thirds of the peer timeout") {
  const auto seconds_to_notice = [](const Args& args) {
    REQUIRE(args.size() == 9);
    return std::stoi(args[2]) + std::stoi(args[5]) * std::stoi(args[8]);
  };
  CHECK(lifeline_keepalive_args(30, {}) == Args{"--mca", "oob_tcp_keepalive_time", "10", "--mca",
                                                "oob_tcp_keepalive_intvl", "5", "--mca",
                                                "oob_tcp_keepalive_probes", "2"});
  for (int timeout : {3, 4, 6, 10, 30, 120, 600}) {
    INFO("RUNRUN_PEER_TIMEOUT=" << timeout);
    CHECK(seconds_to_notice(lifeline_keepalive_args(timeout, {})) < timeout);
  }
  CHECK(seconds_to_notice(lifeline_keepalive_args(1, {})) == 2);  // Linux's least: 1 s each
}

TEST_CASE("no keepalive settings with the peer monitor off or the user's own") {
  CHECK(lifeline_keepalive_args(0, {}).empty());
  CHECK(lifeline_keepalive_args(30, {"--mca", "oob_tcp_keepalive_time", "60"}).empty());
  CHECK(lifeline_keepalive_args(30, {"--mca", "btl", "self,tcp"}).size() == 9);
}
