#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "common/slurm_lists.h"
#include "launcher/hosts/cluster_hosts.h"
#include "launcher/options/command_line.h"
#include "launcher/remote/srun_command.h"

using runrun::InvalidArgumentError;
using runrun::slurm::expand_counts;
using runrun::slurm::expand_host_list;
using namespace runrun::launcher;
using Names = std::vector<std::string>;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

ParsedCommandLine parse(const std::vector<std::string>& args, const Environment& env) {
  std::ostringstream out;
  return parse_command_line(args, env, out);
}

const Environment kAllocation = {{"SLURM_JOB_ID", "77"},
                                 {"SLURM_JOB_NODELIST", "gpu[01-02],cpu3"},
                                 {"SLURM_TASKS_PER_NODE", "2(x2),1"},
                                 {"SLURM_NTASKS", "5"}};

}  // namespace

TEST_CASE("Slurm host lists: ranges, zero padding, several groups and brackets") {
  CHECK(expand_host_list("gpu[01-04,07],cpu3", "X") ==
        Names{"gpu01", "gpu02", "gpu03", "gpu04", "gpu07", "cpu3"});
  CHECK(expand_host_list("n[8-11]", "X") == Names{"n8", "n9", "n10", "n11"});
  CHECK(expand_host_list("gpu[008-010]", "X") == Names{"gpu008", "gpu009", "gpu010"});
  CHECK(expand_host_list("a,b[1,3],c", "X") == Names{"a", "b1", "b3", "c"});
  CHECK(expand_host_list("rack[1-2]-n[1-2]", "X") ==
        Names{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"});
  CHECK(expand_host_list("node-1.example.com", "X") == Names{"node-1.example.com"});
}

TEST_CASE("malformed Slurm host lists name the variable, the text and the fault") {
  const auto err = [](const char* text) {
    return error_of([&] { expand_host_list(text, "SLURM_JOB_NODELIST"); });
  };
  CHECK_THAT(err("n[1-3"),
             Catch::Contains("SLURM_JOB_NODELIST='n[1-3'") && Catch::Contains("without its ']'"));
  CHECK_THAT(err("n1-3]"), Catch::Contains("without its '['"));
  CHECK_THAT(err("n[3-1]"), Catch::Contains("goes down"));
  CHECK_THAT(err("n[a-b]"), Catch::Contains("not a number"));
  CHECK_THAT(err("a,,b"), Catch::Contains("empty entry"));
  CHECK_THAT(err(""), Catch::Contains("empty"));
  CHECK_THAT(err("n[1-99999999]"), Catch::Contains("too long"));
}

TEST_CASE("SLURM_TASKS_PER_NODE counts with their repeat form") {
  CHECK(expand_counts("2(x3),1", "X") == std::vector<int>{2, 2, 2, 1});
  CHECK(expand_counts("4", "X") == std::vector<int>{4});
  CHECK(expand_counts("1,2(x2)", "X") == std::vector<int>{1, 2, 2});
  CHECK_THAT(error_of([] { expand_counts("2(x3", "SLURM_TASKS_PER_NODE"); }),
             Catch::Contains("SLURM_TASKS_PER_NODE='2(x3'") && Catch::Contains("')'"));
  CHECK_THAT(error_of([] { expand_counts("0", "X"); }), Catch::Contains("a count of 0"));
  CHECK_THAT(error_of([] { expand_counts("x", "X"); }), Catch::Contains("not a number"));
}

TEST_CASE("a Slurm allocation's hosts and slots, or nothing outside one") {
  CHECK_FALSE(slurm_allocation({}).has_value());
  const auto allocation = slurm_allocation(kAllocation);
  REQUIRE(allocation.has_value());
  CHECK(allocation->slurm);
  CHECK(allocation->hosts == std::vector<HostSlots>{{"gpu01", 2}, {"gpu02", 2}, {"cpu3", 1}});
  CHECK_THAT(allocation->source,
             Catch::Contains("job 77") && Catch::Contains("SLURM_JOB_NODELIST=gpu[01-02],cpu3"));
  Environment mismatched = kAllocation;
  mismatched["SLURM_TASKS_PER_NODE"] = "2(x2)";
  CHECK_THAT(error_of([&] { slurm_allocation(mismatched); }),
             Catch::Contains("lists 3 nodes") && Catch::Contains("counts for 2"));
  CHECK_THAT(error_of([] { slurm_allocation({{"SLURM_JOB_ID", "5"}}); }),
             Catch::Contains("SLURM_JOB_NODELIST is not set"));
  // -H given: unreadable allocation variables do not stop the job.
  CHECK_FALSE(slurm_allocation({{"SLURM_JOB_ID", "5"}}, true).has_value());
  CHECK(allocation->default_np == 5);
  CHECK_FALSE(allocation->inside_step);
  // salloc -N 2 without -n: a slot per CPU, but SLURM_NTASKS caps the default -np.
  Environment fewer = kAllocation;
  fewer["SLURM_NTASKS"] = "2";
  CHECK(slurm_allocation(fewer)->default_np == 2);
  // Inside an srun step SLURM_NODELIST and SLURM_TASKS_PER_NODE are the step's: paired.
  Environment step = kAllocation;
  step["SLURM_NODELIST"] = "gpu02";
  step["SLURM_TASKS_PER_NODE"] = "1";
  step["SLURM_STEP_ID"] = "0";
  const auto in_step = slurm_allocation(step);
  CHECK(in_step->hosts == std::vector<HostSlots>{{"gpu02", 1}});
  CHECK(in_step->inside_step);
  step["SLURM_STEP_ID"] = "4294967291";  // the batch step
  CHECK_FALSE(slurm_allocation(step)->inside_step);
}

TEST_CASE(
    "runrun in an allocation: no -np takes every task, a smaller -np is allowed, one line "
    "says what was read") {
  auto parsed = parse({"python3", "train.py"}, kAllocation);
  CHECK(parsed.options.num_proc == 5);
  CHECK(parsed.options.slurm.has_value());
  CHECK(parsed.options.hosts == std::vector<HostSlots>{{"gpu01", 2}, {"gpu02", 2}, {"cpu3", 1}});
  REQUIRE(parsed.notices.size() == 1);
  CHECK_THAT(parsed.notices[0], Catch::StartsWith("5 processes on gpu01:2,gpu02:2,cpu3:1, from "
                                                  "the Slurm allocation of job 77") &&
                                    Catch::EndsWith("started through srun"));
  parsed = parse({"-np", "3", "python3", "train.py"}, kAllocation);
  CHECK(parsed.options.num_proc == 3);
  CHECK_THAT(parsed.notices[0], Catch::StartsWith("3 processes on gpu01:2,gpu02:1, from"));
  // Elastic jobs keep their hosts (discovery script or -H) and their own start.
  parsed = parse({"--min-np", "2", "-np", "2", "python3", "train.py"}, kAllocation);
  CHECK_FALSE(parsed.options.slurm.has_value());
}

TEST_CASE(
    "hosts of -H outside the allocation, or with more slots, are refused naming both; "
    "the others take the allocation's names") {
  const auto allocation = *slurm_allocation(kAllocation);
  CHECK(hosts_in_allocation({{"gpu01", 2}, {"cpu3.cluster.org", 1}}, "-H x", allocation, "n") ==
        std::vector<HostSlots>{{"gpu01", 2}, {"cpu3", 1}});
  CHECK(hosts_in_allocation({{"localhost", 1}}, "-H localhost", allocation, "gpu02.c.org") ==
        std::vector<HostSlots>{{"gpu02", 1}});
  CHECK_THAT(error_of([&] {
               hosts_in_allocation({{"gpu01", 1}, {"gpu09", 1}}, "-H gpu01,gpu09", allocation, "n");
             }),
             Catch::Contains("host 'gpu09' of -H gpu01,gpu09 is outside the Slurm allocation of "
                             "job 77 (SLURM_JOB_NODELIST=gpu[01-02],cpu3"));
  CHECK_THAT(error_of([&] { hosts_in_allocation({{"gpu01", 8}}, "-H gpu01:8", allocation, "n"); }),
             Catch::Contains("host 'gpu01' of -H gpu01:8 has 8 slots, more than the 2 of node "
                             "gpu01 in the Slurm allocation of job 77"));
}

TEST_CASE("the MPI Operator's hostfile gives the hosts when -H and --hostfile are absent") {
  char path[] = "/tmp/runrun_operator_hostfile_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path)
      << "job-worker-0.job-worker.ns.svc slots=2\njob-worker-1.job-worker.ns.svc slots=2\n";
  for (const char* name : {"OMPI_MCA_orte_default_hostfile", "OMPI_MCA_prte_default_hostfile"}) {
    const auto parsed = parse({"python3", "train.py"}, {{name, path}});
    CHECK(parsed.options.num_proc == 4);
    CHECK_FALSE(parsed.options.slurm.has_value());
    CHECK(parsed.options.hosts.size() == 2);
    CHECK(parsed.options.hosts[1] == HostSlots{"job-worker-1.job-worker.ns.svc", 2});
    REQUIRE(parsed.notices.size() == 1);
    CHECK_THAT(parsed.notices[0], Catch::Contains(std::string("that ") + name + " names"));
  }
  // -H wins over the operator's file.
  CHECK(parse({"-H", "a:1", "-np", "1", "x"}, {{"OMPI_MCA_orte_default_hostfile", path}})
            .options.hosts == std::vector<HostSlots>{{"a", 1}});
  unlink(path);
  CHECK_THAT(error_of([&] { mpi_operator_hosts({{"OMPI_MCA_orte_default_hostfile", path}}); }),
             Catch::Contains("OMPI_MCA_orte_default_hostfile=") &&
                 Catch::Contains("MPI Operator's hostfile"));
}

TEST_CASE("the srun command of a Gloo job in an allocation, and its host file") {
  LaunchOptions options;
  options.num_proc = 3;
  options.command = {"python3", "train.py", "--lr", "0.1"};
  JobPlan plan;
  plan.launcher_path = "/usr/local/bin/runrun";
  plan.hosts = {{"gpu01", 2}, {"cpu3", 1}};
  plan.host_labels = {"gpu01", "cpu3"};
  CHECK(build_srun_command(options, plan, "/usr/bin/srun") ==
        std::vector<std::string>{"/usr/bin/srun", "--label", "--ntasks", "3", "--nodes", "2",
                                 "--distribution", "arbitrary", "--kill-on-bad-exit=1",
                                 "--export=ALL", "/usr/local/bin/runrun", "--rank-shim", "2,1",
                                 "--srun-task", "--", "python3", "train.py", "--lr", "0.1"});
  const auto in_step = build_srun_command(options, plan, "/usr/bin/srun", true);
  CHECK(std::find(in_step.begin(), in_step.end(), "--overlap") != in_step.end());
  CHECK(srun_hostfile(plan) == "gpu01\ngpu01\ncpu3\n");
  CHECK_THAT(error_of([] { find_srun({{"PATH", "/nonexistent"}}); }),
             Catch::Contains("srun, which is not on PATH (/nonexistent)"));
}
