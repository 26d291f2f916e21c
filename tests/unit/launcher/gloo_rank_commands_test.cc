// runrun --gloo: each rank's exact command and the environment block it gets on its stdin.
#include <catch2/catch.hpp>

#include "launcher/remote/gloo_rank_commands.h"

using namespace runrun::launcher;
using Args = std::vector<std::string>;

namespace {
JobPlan two_host_plan() {
  JobPlan plan;
  plan.launcher_path = "/opt/bin/runrun";
  plan.hosts = {{"localhost", 2}, {"node b", 1}};
  plan.host_labels = {"localhost", "node b"};
  return plan;
}
}  // namespace

TEST_CASE("a local rank runs the shim directly; a remote one through ssh, quoted once") {
  LaunchOptions options;
  options.num_proc = 3;
  options.ssh_port = 2222;
  options.ssh_identity_file = "/k/id rsa";
  options.command = {"python", "-c", "print('hi there')"};
  const JobPlan plan = two_host_plan();
  CHECK(build_gloo_rank_command(options, plan, 1, "/work dir") ==
        Args{"/opt/bin/runrun", "--rank-shim", "2,1", "--gloo-rank", "1", "--", "python", "-c",
             "print('hi there')"});
  CHECK(build_gloo_rank_command(options, plan, 2, "/work dir") ==
        Args{"ssh", "-o", "BatchMode=yes", "-p", "2222", "-i", "/k/id rsa", "node b",
             "cd -- '/work dir' 2>/dev/null; exec /opt/bin/runrun --rank-shim 2,1 --gloo-rank 2 "
             "-- python -c 'print('\\''hi there'\\'')'"});
}

TEST_CASE("option --rsh-agent replaces ssh and is called as ssh is: AGENT HOST COMMAND") {
  LaunchOptions options;
  options.num_proc = 3;
  options.rsh_agent = "/t/agent.sh --flag";
  options.ssh_port = 2222;  // belongs to ssh: not passed to an agent
  options.command = {"./train"};
  CHECK(build_gloo_rank_command(options, two_host_plan(), 2, "/w") ==
        Args{"/t/agent.sh", "--flag", "node b",
             "cd -- /w 2>/dev/null; exec /opt/bin/runrun --rank-shim 2,1 --gloo-rank 2 -- "
             "./train"});
}

TEST_CASE(
    "the rank environment: forwarded names with the launcher's values, then values, "
    "hidden values and the job's entries; nothing for an unset name") {
  JobPlan plan = two_host_plan();
  plan.env.by_name = {"PATH", "UNSET_HERE", "MY_TOKEN"};
  plan.env.with_value = {{"RUNRUN_FUSION_THRESHOLD", "1048576"}};
  plan.env.hidden_values = {{"MY_TOKEN", "s3cret"}};
  const Environment launcher_env = {{"PATH", "/venv/bin:/usr/bin"}, {"MY_TOKEN", "other"}};
  const EnvEntries entries =
      gloo_rank_environment(plan, launcher_env, {{"RUNRUN_RENDEZVOUS_PORT", "4242"}});
  CHECK(entries == EnvEntries{{"PATH", "/venv/bin:/usr/bin"},
                              {"MY_TOKEN", "s3cret"},
                              {"RUNRUN_FUSION_THRESHOLD", "1048576"},
                              {"RUNRUN_RENDEZVOUS_PORT", "4242"}});
}
