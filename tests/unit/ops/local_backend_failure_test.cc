// Failure paths of the local backend: fail_rank, abort, collective timeout. Each test must end
// (no hang) and every surviving rank must see the right error naming the lost rank.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "common/errors.h"
#include "tests/unit/ops/local_ranks.h"
#include "tests/unit/ops/rank_errors.h"

using runrun::DataType;
using runrun::LocalBackend;
using runrun::LocalWorld;
using runrun::ReduceOp;
using runrun::testing::is;
using runrun::testing::message_of;
using runrun::testing::run_ranks_collect;

TEST_CASE("fail_rank: peers waiting on the lost rank get PeerFailureError naming it") {
  auto world = std::make_shared<LocalWorld>(4);
  std::atomic<int> waiting{0};
  std::thread killer([&] {
    // Fail rank 2 once the other ranks are (about to be) blocked; correctness does not depend
    // on the timing: a later wait sees the failure too.
    while (waiting.load() < 3) std::this_thread::yield();
    world->fail_rank(2);
  });
  const auto errors = run_ranks_collect(world, [&](LocalBackend& backend) {
    float value = 1;
    backend.allreduce(&value, &value, 1, DataType::kFloat32, ReduceOp::kSum);  // everyone
    if (backend.rank() == 2) {
      // The rank to be lost waits where nobody joins it; it fails once it is marked failed.
      std::vector<uint64_t> bits{1};
      backend.control().allreduce_and(bits);
    }
    ++waiting;
    backend.allreduce(&value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
  });
  killer.join();
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r << ": "
                 << (errors[static_cast<size_t>(r)] ? message_of(errors[static_cast<size_t>(r)])
                                                    : "no error"));
    REQUIRE(errors[static_cast<size_t>(r)]);
    CHECK(is<runrun::PeerFailureError>(errors[static_cast<size_t>(r)]));
    if (r != 2)
      CHECK_THAT(message_of(errors[static_cast<size_t>(r)]), Catch::Contains("lost rank 2"));
  }
}

TEST_CASE("fail_rank before a collective: later waits fail at once, subgroups included") {
  auto world = std::make_shared<LocalWorld>(3);
  const auto errors = run_ranks_collect(world, [&](LocalBackend& backend) {
    auto sub = backend.create_subgroup({0, 1});
    backend.barrier();
    if (backend.rank() == 0) world->fail_rank(1);
    backend.barrier();  // may or may not complete for rank 1 depending on timing
    if (sub) sub->barrier();
    backend.barrier();
  });
  REQUIRE(errors[0]);
  CHECK(is<runrun::PeerFailureError>(errors[0]));
  CHECK_THAT(message_of(errors[0]), Catch::Contains("rank 1"));
  REQUIRE(errors[2]);
  CHECK(is<runrun::PeerFailureError>(errors[2]));
}

TEST_CASE("abort: blocked and later calls throw ShutDownError, peers are told the rank left") {
  auto world = std::make_shared<LocalWorld>(2);
  std::atomic<LocalBackend*> rank0{nullptr};
  std::atomic<bool> abort_returned{false};
  std::exception_ptr control_error;  // what rank 0's blocked control call threw
  std::thread aborter([&] {
    while (rank0.load() == nullptr) std::this_thread::yield();
    rank0.load()->abort();
    abort_returned = true;
  });
  const auto errors = run_ranks_collect(world, [&](LocalBackend& backend) {
    if (backend.rank() == 0) {
      rank0 = &backend;
      std::vector<uint64_t> bits{1};
      // Rank 1 never joins the control channel. Whatever this call throws, the backend must
      // stay alive until abort() returned (below); the error is checked at the end.
      try {
        backend.control().allreduce_and(bits);
      } catch (...) {
        control_error = std::current_exception();
      }
      // The backend must outlive the abort() call running on the other thread.
      while (!abort_returned.load()) std::this_thread::yield();
      backend.barrier();  // later call: ShutDownError again
    } else {
      backend.barrier();  // rank 0 never arrives (aborted): PeerFailureError
    }
  });
  aborter.join();
  REQUIRE(control_error);
  CHECK(is<runrun::ShutDownError>(control_error));
  REQUIRE(errors[0]);
  CHECK(is<runrun::ShutDownError>(errors[0]));
  REQUIRE(errors[1]);
  CHECK(is<runrun::PeerFailureError>(errors[1]));
  CHECK_THAT(message_of(errors[1]), Catch::Contains("lost rank 0") && Catch::Contains("aborted"));
}

TEST_CASE("collective timeout: a rank that never arrives turns into TimeoutError") {
  runrun::LocalWorldOptions options;
  options.collective_timeout = std::chrono::milliseconds(50);
  auto world = std::make_shared<LocalWorld>(2, options);
  std::atomic<bool> rank0_done{false};
  const auto errors = run_ranks_collect(world, [&](LocalBackend& backend) {
    if (backend.rank() == 0) {
      try {
        backend.barrier();  // rank 1 stays away until this gave up
      } catch (...) {
        rank0_done = true;
        throw;
      }
      rank0_done = true;
    } else {
      while (!rank0_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      backend.barrier();  // rank 0 timed out and left: PeerFailureError naming it
    }
  });
  REQUIRE(errors[0]);
  CHECK(is<runrun::TimeoutError>(errors[0]));
  CHECK_THAT(message_of(errors[0]), Catch::Contains("barrier") && Catch::Contains("timed out"));
  REQUIRE(errors[1]);
  CHECK(is<runrun::PeerFailureError>(errors[1]));
  CHECK_THAT(message_of(errors[1]), Catch::Contains("lost rank 0") && Catch::Contains("timed out"));
}
