// The runtime writes the timeline phases of each tensor, and the file is valid JSON.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;

TEST_CASE("RUNRUN_TIMELINE records negotiation, queue, fusion copies and the collective",
          "[core][timeline]") {
  std::string path = "/tmp/runrun_timeline_test_" + std::to_string(::getpid()) + ".json";
  std::remove(path.c_str());
  std::atomic<bool> rank0_enqueued{false};
  runrun::testing::run_ranks(
      2,
      [&](int rank, Runtime& rt) {
        // Rank 1 is late: it enqueues 100 ms after rank 0 enqueued everything. (A plain sleep on
        // rank 1 was not enough: a rank 0 delayed as long saw both ranks on time.)
        if (rank == 1) {
          runrun::testing::wait_for(rank0_enqueued);
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        std::vector<std::vector<float>> t(4, std::vector<float>(8, 1.0f));
        std::vector<std::shared_ptr<Handle>> handles;
        for (size_t i = 0; i < t.size(); ++i) {
          TensorView v{t[i].data(), DataType::kFloat32, {8}};
          handles.push_back(rt.allreduce("layer" + std::to_string(i), v, v, {}));
        }
        if (rank == 0) rank0_enqueued = true;
        for (auto& h : handles) runrun::testing::require_ok(*h);
      },
      {{"RUNRUN_TIMELINE", path}, {"RUNRUN_TIMELINE_MARK_CYCLES", "1"}});
  std::ifstream file(path);
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  // Horovod's vocabulary: rows "allreduce.<name>", NEGOTIATE_ALLREDUCE, ALLREDUCE holding QUEUE,
  // the copies and the transport's part; CYCLE_START marks when asked for.
  for (const char* phase : {"\"NEGOTIATE_ALLREDUCE\"", "\"QUEUE\"", "MEMCPY_IN_FUSION_BUFFER",
                            "\"ALLREDUCE\"", "_ALLREDUCE\"", "MEMCPY_OUT_FUSION_BUFFER",
                            "\"allreduce.layer3\"", "late_ranks", "\"CYCLE_START\""}) {
    INFO(phase);
    CHECK(text.str().find(phase) != std::string::npos);
  }
  std::string check = "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' " + path;
  CHECK(std::system(check.c_str()) == 0);
  std::remove(path.c_str());
}
