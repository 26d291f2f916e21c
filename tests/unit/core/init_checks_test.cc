// What a rank refuses before its transport connects it (core/api/init_checks.h): its place from
// the launcher's variables, an unwritable RUNRUN_TIMELINE on rank 0 only, and a
// RUNRUN_THREAD_AFFINITY CPU this process may not run on.
#include <catch2/catch.hpp>
#include <sched.h>
#include <unistd.h>

#include <string>

#include "common/errors.h"
#include "core/api/init_checks.h"

using namespace runrun;

TEST_CASE("the early place comes from the rank shim, then mpirun, else a job of one") {
  const auto shim = early_place({{"RUNRUN_RANK", "3"},
                                 {"RUNRUN_LOCAL_RANK", "1"},
                                 {"RUNRUN_LOCAL_SIZE", "2"},
                                 {"OMPI_COMM_WORLD_RANK", "9"}},
                                false);
  CHECK((shim.rank == 3 && shim.local_rank == 1 && shim.local_size == 2));
  const auto mpirun = early_place({{"OMPI_COMM_WORLD_RANK", "2"},
                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}},
                                  false);
  CHECK((mpirun.rank == 2 && mpirun.local_rank == 0 && mpirun.local_size == 1));
  const auto alone = early_place({}, true);
  CHECK((alone.rank == 0 && alone.local_rank == 0 && alone.local_size == 1));
  CHECK(early_place({{"RANK", "0"}}, false).rank == -1);  // torchrun's: left to the runtime
  CHECK(early_place({{"RUNRUN_RANK", "x"}}, false).rank == -1);
}

TEST_CASE("an unwritable timeline is refused on rank 0 only, and no file is left") {
  Config config;
  config.timeline_path = "/nonexistent-runrun-dir/timeline.json";
  CHECK_THROWS_WITH(
      check_before_transport(config, {0, 0, 1}),
      Catch::Contains("RUNRUN_TIMELINE on rank 0") && Catch::Contains("No such file or directory"));
  CHECK_NOTHROW(check_before_transport(config, {1, 1, 2}));
  CHECK_NOTHROW(check_before_transport(config, {-1, -1, -1}));
  char dir[] = "/tmp/runrun_init_checks.XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  config.timeline_path = std::string(dir) + "/timeline.json";
  CHECK_NOTHROW(check_before_transport(config, {0, 0, 1}));
  CHECK(access(config.timeline_path.c_str(), F_OK) != 0);
  rmdir(dir);
}

TEST_CASE("an affinity CPU this local rank may not run on is refused before the transport") {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  int allowed = 0;
  while (!CPU_ISSET(allowed, &set)) ++allowed;
  Config config;
  config.thread_affinity = {allowed, CPU_SETSIZE - 1};
  CHECK_NOTHROW(check_before_transport(config, {0, 0, 2}));
  CHECK_THROWS_AS(check_before_transport(config, {1, 1, 2}), InvalidArgumentError);
  CHECK_THROWS_WITH(check_before_transport(config, {1, 1, 2}),
                    Catch::Contains("RUNRUN_THREAD_AFFINITY on rank 1"));
  CHECK_NOTHROW(check_before_transport(config, {-1, -1, -1}));  // unknown: left to the runtime
}
