// RUNRUN_THREAD_AFFINITY: parsing, the checks against the topology and the allowed CPUs, and
// real background threads pinned and named (read back from /proc/self/task).
#include <catch2/catch.hpp>
#include <dirent.h>
#include <sched.h>
#include <sys/types.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "core/runtime/config.h"
#include "core/runtime/thread_placement.h"
#include "tests/unit/core/rank_threads.h"

using namespace runrun;

namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// The CPUs each thread of this process named `name` may run on, one list per thread.
std::vector<std::vector<int>> affinities_of_threads_named(const std::string& name) {
  std::vector<std::vector<int>> found;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return found;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name) continue;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(static_cast<pid_t>(std::stoi(entry->d_name)), sizeof(set), &set) != 0) {
      continue;
    }
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
    found.push_back(cpus);
  }
  closedir(dir);
  return found;
}

Topology local(int local_rank, int local_size) {
  Topology t;
  t.rank = local_rank + 4;
  t.size = 8;
  t.local_rank = local_rank;
  t.local_size = local_size;
  return t;
}

}  // namespace

TEST_CASE("RUNRUN_THREAD_AFFINITY is a comma-separated list of CPU ids", "[config]") {
  CHECK(Config::load().thread_affinity.empty());
  CHECK(Config::load({{"RUNRUN_THREAD_AFFINITY", "3"}}).thread_affinity == std::vector<int>{3});
  CHECK(Config::load({{"RUNRUN_THREAD_AFFINITY", "0,1,12"}}).thread_affinity ==
        std::vector<int>{0, 1, 12});
  for (const char* bad : {"0,,1", "a", "-1", "1,x", "1,", " 1", "1.5"}) {
    INFO(bad);
    CHECK_THROWS_WITH(Config::load({{"RUNRUN_THREAD_AFFINITY", bad}}),
                      Catch::Contains("RUNRUN_THREAD_AFFINITY='" + std::string(bad) + "'") &&
                          Catch::Contains("is not a CPU id"));
  }
}

TEST_CASE("the background CPU is the list's entry of the local rank, checked", "[config]") {
  const std::vector<int> cpus = allowed_cpus();
  CHECK(background_cpu({}, local(0, 2)) == -1);
  CHECK(background_cpu({cpus.front(), cpus.back()}, local(1, 2)) == cpus.back());
  CHECK(background_cpu({cpus.back(), cpus.front()}, local(0, 2)) == cpus.back());
  CHECK_THROWS_WITH(background_cpu({cpus.front()}, local(0, 2)),
                    Catch::Contains("RUNRUN_THREAD_AFFINITY on rank 4 (local rank 0 of 2") &&
                        Catch::Contains("lists 1 CPU id(s): give one CPU id per local rank"));
  CHECK_THROWS_WITH(background_cpu({cpus.front(), 1000}, local(1, 2)),
                    Catch::Contains("names CPU 1000, which this process may not run on"));
}

// After an allreduce every worker of the job has run its loop (and so placed its thread).
void allreduce_once(Runtime& runtime) {
  std::vector<float> values(4, 1.0f);
  testing::require_ok(*runtime.allreduce("placed", testing::view_of(values),
                                         testing::view_of(values), AllreduceOptions{}));
}

TEST_CASE("background threads are named and pinned to their local rank's CPU", "[config]") {
  const std::vector<int> cpus = allowed_cpus();
  const int first = cpus.front(), last = cpus.back();
  std::vector<std::vector<int>> seen;
  testing::run_ranks(
      2,
      [&](int rank, Runtime& runtime) {
        allreduce_once(runtime);
        if (rank == 0) seen = affinities_of_threads_named("runrun-set0");
      },
      {{"RUNRUN_THREAD_AFFINITY", std::to_string(last) + "," + std::to_string(first)}});
  std::vector<std::vector<int>> expected = {{last}, {first}};
  std::sort(seen.begin(), seen.end());
  std::sort(expected.begin(), expected.end());
  CHECK(seen == expected);

  // Not pinned by default: the worker may run on every allowed CPU, and is still named.
  std::vector<std::vector<int>> unpinned;
  testing::run_ranks(1, [&](int, Runtime& runtime) {
    allreduce_once(runtime);
    unpinned = affinities_of_threads_named("runrun-set0");
  });
  CHECK(unpinned == std::vector<std::vector<int>>{cpus});
}
