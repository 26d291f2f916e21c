// The background thread's batching of ops enqueued one call at a time (TensorQueue::settle,
// RUNRUN_BURST_GAP_US) and the completion of a bucket's handles (OpExecutor::complete_members).
// The gaps are seconds long here, so that what a test checks never depends on how the
// scheduler treats the enqueuing thread; the bounds only make a bug fail instead of hanging.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;
using runrun::testing::view_of;

namespace {

using Clock = std::chrono::steady_clock;

// One allreduce call per tensor, as a gradient hook or a Python loop enqueues them.
std::vector<std::shared_ptr<Handle>> enqueue_one_by_one(Runtime& rt,
                                                        std::vector<std::vector<float>>& tensors,
                                                        const std::string& prefix) {
  std::vector<std::shared_ptr<Handle>> handles;
  for (size_t i = 0; i < tensors.size(); ++i) {
    handles.push_back(rt.allreduce(prefix + std::to_string(i), view_of(tensors[i]),
                                   view_of(tensors[i]), AllreduceOptions{}));
  }
  return handles;
}

const std::map<std::string, std::string> kLongGap = {{"RUNRUN_BURST_GAP_US", "10000000"},
                                                     {"RUNRUN_CYCLE_TIME_MS", "60000"}};

}  // namespace

TEST_CASE("ops enqueued one call at a time run in one round once the caller waits",
          "[core][burst]") {
  run_ranks(
      2,
      [](int rank, Runtime& rt) {
        for (int step = 0; step < 3; ++step) {
          std::vector<std::vector<float>> tensors(40, std::vector<float>(3, rank + 1.0f));
          const size_t rounds_before = rt.worker(0).negotiation_rounds();
          auto handles = enqueue_one_by_one(rt, tensors, "t");
          for (auto& handle : handles) require_ok(*handle);  // before a failed check unwinds
          RANK_CHECK_EQ(rt.worker(0).negotiation_rounds() - rounds_before, size_t{1});
          for (const auto& tensor : tensors) RANK_CHECK(tensor[2] == 1.5f);  // the average
        }
      },
      kLongGap);
}

TEST_CASE("a lone op is not held back by the burst gap when its caller waits", "[core][burst]") {
  run_ranks(
      2,
      [](int rank, Runtime& rt) {
        std::vector<float> x(5, rank + 1.0f);
        const auto start = Clock::now();
        require_ok(*rt.allreduce("x", view_of(x), view_of(x), AllreduceOptions{}));
        RANK_CHECK(Clock::now() - start < std::chrono::seconds(5));  // the gap is 10 s
        RANK_CHECK(x[4] == 1.5f);
      },
      kLongGap);
}

TEST_CASE("an op nobody waits on runs once RUNRUN_CYCLE_TIME_MS caps the burst gap",
          "[core][burst]") {
  run_ranks(2,
            [](int rank, Runtime& rt) {
              std::vector<float> x(5, rank + 1.0f);
              auto handle = rt.allreduce("x", view_of(x), view_of(x), AllreduceOptions{});
              const auto give_up = Clock::now() + std::chrono::seconds(60);
              while (!handle->done() && Clock::now() < give_up) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));  // polls, never waits
              }
              RANK_CHECK(handle->done());
              RANK_CHECK(x[0] == 1.5f);
            },
            {{"RUNRUN_BURST_GAP_US", "10000000"}, {"RUNRUN_CYCLE_TIME_MS", "200"}});
}

TEST_CASE("the waiter of a bucket's first handle finds every member done", "[core][burst]") {
  run_ranks(
      2,
      [](int rank, Runtime& rt) {  // one round, one bucket: as in the first test
        for (int step = 0; step < 10; ++step) {
          std::vector<std::vector<float>> tensors(100, std::vector<float>(4, rank + 1.0f));
          auto handles = enqueue_one_by_one(rt, tensors, "g");
          require_ok(*handles[0]);
          size_t done = 0;
          for (const auto& handle : handles) done += handle->done() ? 1 : 0;
          for (auto& handle : handles) require_ok(*handle);  // before a failed check unwinds
          RANK_CHECK_EQ(done, handles.size());
        }
      },
      kLongGap);
}

TEST_CASE("a shutdown is not held back by the burst gap", "[core][burst]") {
  // Both gaps far beyond the bound below: an op nobody waits on is pending at shutdown, which
  // must end the settling and fail or finish the op, not wait out the gap.
  run_ranks(
      2,
      [](int rank, Runtime& rt) {
        std::vector<float> x(5, rank + 1.0f);
        auto handle = rt.allreduce("x", view_of(x), view_of(x), AllreduceOptions{});
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the worker is settling now
        const auto start = Clock::now();
        rt.shutdown();
        RANK_CHECK(Clock::now() - start < std::chrono::seconds(20));
        RANK_CHECK(handle->done());
      },
      {{"RUNRUN_BURST_GAP_US", "100000000"}, {"RUNRUN_CYCLE_TIME_MS", "100000"}});
}
