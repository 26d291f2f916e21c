// Backend v2 contract (ops/backend.h, ops/completion.h, ops/device.h) over the local backend:
// completions (ready, failed, errors of the running op), device checks, and control channels
// that are owned apart from the backend that made them and split themselves for subgroups.

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"
#include "ops/backend.h"
#include "ops/completion.h"
#include "ops/device.h"
#include "tests/unit/ops/local_ranks.h"
#include "tests/unit/ops/rank_errors.h"

using runrun::Completion;
using runrun::ControlChannel;
using runrun::DataType;
using runrun::LocalBackend;
using runrun::LocalWorld;
using runrun::ReadyCompletion;
using runrun::ReduceOp;
using runrun::testing::is;
using runrun::testing::message_of;
using runrun::testing::run_ranks;
using runrun::testing::run_ranks_collect;

TEST_CASE("ReadyCompletion: a completed op polls and waits true") {
  ReadyCompletion done;
  CHECK(done.poll());
  CHECK(done.wait_for(std::chrono::milliseconds(0)));
  done.wait();
}

TEST_CASE("ReadyCompletion: a failed op throws its error from every call, same type and text") {
  auto error = std::make_exception_ptr(runrun::PeerFailureError(RUNRUN_WHERE, "lost rank 3"));
  ReadyCompletion failed(error);
  CHECK_THROWS_AS(failed.poll(), runrun::PeerFailureError);
  CHECK_THROWS_WITH(failed.wait_for(std::chrono::milliseconds(5)), Catch::Contains("lost rank 3"));
  CHECK_THROWS_AS(failed.wait(), runrun::PeerFailureError);
}

TEST_CASE("run_to_completion: the body's error surfaces from the completion, not the call") {
  std::unique_ptr<Completion> completion;
  REQUIRE_NOTHROW(completion = runrun::run_to_completion(
                      [] { throw runrun::TimeoutError(RUNRUN_WHERE, "took too long"); }));
  CHECK_THROWS_AS(completion->wait(), runrun::TimeoutError);
  int ran = 0;
  runrun::run_to_completion([&] { ++ran; })->wait();
  CHECK(ran == 1);
}

namespace {

// Completes on the third poll; counts wait_for calls (Completion::wait loops over wait_for).
class CountingCompletion final : public Completion {
 public:
  bool poll() override { return ++polls_ >= 3; }
  bool wait_for(std::chrono::milliseconds) override {
    ++waits_;
    return poll();
  }
  int waits() const { return waits_; }

 private:
  int polls_ = 0;
  int waits_ = 0;
};

}  // namespace

TEST_CASE("Completion::wait: waits again after a wait_for that ran out of time") {
  CountingCompletion completion;
  completion.wait();
  CHECK(completion.waits() == 3);
}

TEST_CASE("local: start_* returns a completion with the op's result") {
  run_ranks(std::make_shared<LocalWorld>(3), [](LocalBackend& backend) {
    float value = static_cast<float>(backend.rank() + 1);
    auto completion =
        backend.start_allreduce(runrun::cpu_buffer(&value), runrun::cpu_buffer(&value), 1,
                                DataType::kFloat32, ReduceOp::kSum);
    REQUIRE(completion->poll());  // local runs the op on the calling thread
    REQUIRE(value == 6.0f);
  });
}

TEST_CASE("local: an error of the running op comes from its completion") {
  auto world = std::make_shared<LocalWorld>(2);
  world->fail_rank(1);
  const auto errors = run_ranks_collect(world, [](LocalBackend& backend) {
    if (backend.rank() != 0) return;
    float value = 1;
    std::unique_ptr<Completion> completion;
    REQUIRE_NOTHROW(completion = backend.start_allreduce(runrun::cpu_buffer(&value),
                                                         runrun::cpu_buffer(&value), 1,
                                                         DataType::kFloat32, ReduceOp::kSum));
    completion->wait();
  });
  REQUIRE(errors[0]);
  CHECK(is<runrun::PeerFailureError>(errors[0]));
  CHECK_THAT(message_of(errors[0]), Catch::Contains("rank 1"));
}

TEST_CASE("a buffer on a device the backend cannot address: UnsupportedError naming it, the op") {
  auto world = std::make_shared<LocalWorld>(1);
  LocalBackend backend(world, 0);
  float value = 1;
  const runrun::DeviceBuffer on_gpu{&value, DLDevice{kDLCUDA, 1}};
  CHECK_THROWS_AS(backend.start_allreduce(on_gpu, on_gpu, 1, DataType::kFloat32, ReduceOp::kSum),
                  runrun::UnsupportedError);
  CHECK_THROWS_WITH(backend.start_broadcast(on_gpu, 4, 0), Catch::Contains("broadcast") &&
                                                               Catch::Contains("cuda:1") &&
                                                               Catch::Contains("local backend"));
  CHECK_THROWS_WITH(backend.start_allgatherv(runrun::cpu_buffer(&value), 4, on_gpu, {4}),
                    Catch::Contains("allgatherv") && Catch::Contains("cuda:1"));
  // Pinned host memory is host memory.
  const runrun::DeviceBuffer pinned{&value, DLDevice{kDLCUDAHost, 0}};
  backend.start_allreduce(pinned, pinned, 1, DataType::kFloat32, ReduceOp::kSum)->wait();
}

TEST_CASE("device helpers: canonical devices and names") {
  CHECK(runrun::device_string({kDLCPU, 0}) == "cpu");
  CHECK(runrun::device_string({kDLCUDA, 3}) == "cuda:3");
  CHECK(runrun::same_device(runrun::canonical_device({kDLCUDAHost, 2}), runrun::kCpuDevice));
  CHECK(runrun::same_device(runrun::canonical_device({kDLCPU, 7}), runrun::kCpuDevice));
  CHECK_FALSE(runrun::is_cpu({kDLCUDA, 0}));
  CHECK(runrun::canonical_device({kDLCUDA, 1}).device_id == 1);
}

TEST_CASE("a control channel outlives the backend that made it") {
  run_ranks(std::make_shared<LocalWorld>(2), [](LocalBackend& world_backend) {
    std::unique_ptr<ControlChannel> control;
    {
      LocalBackend backend(world_backend.world(), world_backend.rank());
      control = backend.create_control_channel();
    }
    std::vector<uint64_t> bits{world_backend.rank() == 0 ? 0b0110u : 0b0011u};
    control->allreduce_and(bits);
    CHECK(bits[0] == 0b0010u);
  });
}

TEST_CASE("aborting a backend leaves a control channel it made usable on that rank") {
  auto world = std::make_shared<LocalWorld>(1);
  LocalBackend backend(world, 0);
  auto control = backend.create_control_channel();
  backend.abort();
  CHECK_THROWS_AS(backend.barrier(), runrun::ShutDownError);
  std::string text = "still here";
  control->broadcast(text, 0);
  CHECK(text == "still here");
  control->abort();
  CHECK_THROWS_AS(control->broadcast(text, 0), runrun::ShutDownError);
}

TEST_CASE("control channels split for subgroups: members talk, others get nullptr") {
  run_ranks(std::make_shared<LocalWorld>(3), [](LocalBackend& backend) {
    auto control = backend.create_control_channel();
    auto sub = control->create_subgroup({0, 2});
    if (backend.rank() == 1) {
      CHECK(sub == nullptr);
      return;
    }
    REQUIRE(sub != nullptr);
    std::string text = backend.rank() == 2 ? "from global rank 2" : "";
    sub->broadcast(text, 1);  // subgroup rank 1 is global rank 2
    CHECK(text == "from global rank 2");
    const auto gathered = sub->gather(std::to_string(backend.rank()), 0);
    if (backend.rank() == 0) CHECK(gathered == std::vector<std::string>{"0", "2"});
  });
}

TEST_CASE("control create_subgroup: ranks that pass different lists all get MismatchError") {
  const auto errors = run_ranks_collect(std::make_shared<LocalWorld>(2), [](LocalBackend& backend) {
    auto control = backend.create_control_channel();
    control->create_subgroup(backend.rank() == 0 ? std::vector<int>{0} : std::vector<int>{0, 1});
  });
  for (const auto& error : errors) {
    REQUIRE(error);
    CHECK(is<runrun::MismatchError>(error));
  }
}
