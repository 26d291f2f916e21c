// The NCCL data backend (ops/nccl/nccl_backend.h) without a GPU: ranks are threads over a local
// control channel, each driving its own "device" (cuda:rank) of the fake CUDA runtime, with the
// fake NCCL (fake_nccl.cc) as libnccl. The backend conformance suite runs through it (every op,
// dtype and size compared exactly with a reference; uneven allgather as grouped broadcasts,
// alltoall with splits as grouped send/recv, uneven reducescatter as grouped reduces;
// subgroups with communicators of their own), then what only the NCCL backend does: average and
// pre/postscale by ncclAvg and pre-multiplied sums, what it refuses, and its error paths —
// a missing peer until the collective timeout, a peer that died, abort from another thread.

#include <stdlib.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "ops/device_backend.h"
#include "ops/hierarchical/hierarchical_device_backend.h"
#include "ops/local/local_backend.h"
#include "tests/support/backend_conformance.h"
#include "tests/unit/gpu/fake_cuda.h"
#include "tests/unit/ops/rank_errors.h"

// Rank threads check by throwing (Catch2 v2 assertions are not thread-safe).
namespace runrun {
namespace {

const bool fakes_selected = [] {
  setenv("RUNRUN_CUDART_LIBRARY", RUNRUN_FAKE_CUDART, 1);
  setenv("RUNRUN_NCCL_LIBRARY", RUNRUN_FAKE_NCCL, 1);
  return true;
}();

// The conformance suite moves host memory; with the fake runtime host memory is device memory,
// so this adapter hands the NCCL backend every buffer as memory of its device (cuda:rank).
class OnDevice final : public Backend {
 public:
  explicit OnDevice(std::unique_ptr<DeviceBackend> nccl) : nccl_(std::move(nccl)) {}
  DeviceBackend& nccl() { return *nccl_; }

  std::string_view name() const override { return nccl_->name(); }
  const Topology& topology() const override { return nccl_->topology(); }
  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override {
    return nccl_->start_allreduce(dev(in), dev(out), count, type, op);
  }
  CompletionPtr start_allgatherv(ConstDeviceBuffer in, size_t send_bytes, DeviceBuffer out,
                                 const std::vector<size_t>& recv_bytes) override {
    return nccl_->start_allgatherv(dev(in), send_bytes, dev(out), recv_bytes);
  }
  CompletionPtr start_broadcast(DeviceBuffer buffer, size_t bytes, int root) override {
    return nccl_->start_broadcast(dev(buffer), bytes, root);
  }
  CompletionPtr start_alltoallv(ConstDeviceBuffer in, const std::vector<size_t>& send_bytes,
                                DeviceBuffer out, const std::vector<size_t>& recv_bytes) override {
    return nccl_->start_alltoallv(dev(in), send_bytes, dev(out), recv_bytes);
  }
  CompletionPtr start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                    const std::vector<size_t>& recv_counts, DataType type,
                                    ReduceOp op) override {
    return nccl_->start_reducescatter(dev(in), dev(out), recv_counts, type, op);
  }
  CompletionPtr start_barrier() override { return nccl_->start_barrier(); }
  std::unique_ptr<ControlChannel> create_control_channel() override {
    return nccl_->create_control_channel();
  }
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override {
    std::unique_ptr<Backend> sub = nccl_->create_subgroup(ranks);
    if (!sub) return nullptr;
    return std::make_unique<OnDevice>(
        std::unique_ptr<DeviceBackend>(static_cast<DeviceBackend*>(sub.release())));
  }

 protected:
  void abort_transport() override { nccl_->abort(); }

 private:
  ConstDeviceBuffer dev(ConstDeviceBuffer b) const { return {b.data, {kDLCUDA, nccl_->device()}}; }
  DeviceBuffer dev(DeviceBuffer b) const { return {b.data, {kDLCUDA, nccl_->device()}}; }
  std::unique_ptr<DeviceBackend> nccl_;
};

// Runs `body` on `size` thread-ranks, each with an NCCL backend on cuda:rank whose control
// channel is the local backend's; rethrows the first failure.
// hosts > 1: the ranks are split into that many "hosts" of consecutive ranks (the topology a
// launcher reports) and the backend is the hierarchical one over the NCCL backend.
void run_nccl_ranks(int size, const std::function<void(OnDevice&)>& body,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                    int hosts = 1) {
  REQUIRE(fakes_selected);
  REQUIRE(nccl_unusable_reason().empty());
  auto world = std::make_shared<LocalWorld>(size);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        LocalBackend local(world, rank);
        Topology topology = local.topology();
        if (hosts > 1) {
          const int per_host = size / hosts;
          topology = {rank, size, rank % per_host, per_host, rank / per_host, hosts};
        }
        std::unique_ptr<DeviceBackend> nccl =
            make_nccl_backend(local.create_control_channel(), topology, rank, timeout, nullptr);
        if (hosts > 1) {
          std::string why_not;
          nccl = make_hierarchical_device(std::move(nccl), topology, &why_not);
          RANK_CHECK_EQ(why_not, "");
          RANK_CHECK(dynamic_cast<HierarchicalDeviceBackend*>(nccl.get()) != nullptr);
        }
        OnDevice backend(std::move(nccl));
        body(backend);
      } catch (...) {
        errors[static_cast<size_t>(rank)] = std::current_exception();
        world->fail_rank(rank);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  testing::rethrow_root_cause(errors);
}

conformance::Options quick() {
  conformance::Options options;
  options.large_count = 100003;
  options.reduces = [](DataType type, ReduceOp op) { return nccl_can_scale(type, op, {}); };
  return options;
}

TEST_CASE("nccl backend passes the conformance suite with 1, 2 and 4 ranks") {
  for (int size : {1, 2, 4}) {
    INFO("ranks: " << size);
    run_nccl_ranks(size, [](OnDevice& backend) { conformance::run_all(backend, quick()); });
  }
}

std::vector<float> floats(size_t n, const std::function<float(size_t)>& f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = f(i);
  return v;
}

TEST_CASE("hierarchical nccl allreduce (2 hosts x 2 ranks) passes the conformance suite") {
  // Every op and dtype NCCL reduces, even and uneven counts (not divisible by the 2 ranks of a
  // host, fewer elements than ranks), in place and not, compared exactly with a reference.
  run_nccl_ranks(
      4, [](OnDevice& backend) { conformance::run_all(backend, quick()); },
      std::chrono::milliseconds(0), 2);
}

TEST_CASE("hierarchical nccl: switched off (the autotuner's switch) the allreduce runs flat") {
  for (bool on : {false, true}) {
    INFO("hierarchical: " << on);
    const long before = fake_nccl_calls();
    run_nccl_ranks(
        4,
        [on](OnDevice& b) {
          auto* hierarchical = dynamic_cast<HierarchicalDeviceBackend*>(&b.nccl());
          RANK_CHECK(hierarchical != nullptr);
          hierarchical->set_hierarchical(on);
          std::vector<float> v(8, static_cast<float>(b.rank()));
          const DLDevice dev{kDLCUDA, b.nccl().device()};
          b.nccl()
              .start_allreduce({v.data(), dev}, {v.data(), dev}, 8, DataType::kFloat32,
                               ReduceOp::kSum)
              ->wait();
          RANK_CHECK(v == std::vector<float>(8, 6.0f));
        },
        std::chrono::milliseconds(0), 2);
    // Flat: one ncclAllReduce per rank; hierarchical: reduce-scatter, allreduce, allgather.
    CHECK(fake_nccl_calls() - before == (on ? 12 : 4));
  }
}

TEST_CASE("hierarchical nccl: not a grid of hosts runs flat, and says why") {
  run_nccl_ranks(2, [](OnDevice& b) {
    std::string why_not;  // both ranks on one host (the local backend's topology)
    auto same = b.nccl().create_subgroup({0, 1});
    std::unique_ptr<DeviceBackend> flat(static_cast<DeviceBackend*>(same.release()));
    DeviceBackend* before = flat.get();
    auto result = make_hierarchical_device(std::move(flat), b.topology(), &why_not);
    RANK_CHECK(result.get() == before);
    RANK_CHECK_EQ(why_not, "every rank is on one host");
  });
}

TEST_CASE("nccl allreduce: average by ncclAvg, pre/postscale and averages by pre-multiplied sums") {
  for (int hosts : {1, 2}) {  // flat, and hierarchical: scaled once, not per stage
    INFO("hosts: " << hosts);
    run_nccl_ranks(
        4,
        [](OnDevice& b) {
          const int rank = b.rank();
          const DLDevice dev{kDLCUDA, b.nccl().device()};
          const size_t n = 9;
          auto mine = floats(n, [&](size_t i) { return static_cast<float>(i) + 4.0f * rank; });
          // sum over ranks r of i + 4r = 4i + 24
          auto run = [&](DeviceReduceScaling scaling) {
            std::vector<float> in = mine, out(n, -1.0f);
            b.nccl()
                .start_allreduce_scaled({in.data(), dev}, {out.data(), dev}, n, DataType::kFloat32,
                                        ReduceOp::kSum, scaling)
                ->wait();
            return out;
          };
          RANK_CHECK_EQ(run({1.0, true}), floats(n, [](size_t i) { return i + 6.0f; }));
          RANK_CHECK_EQ(run({0.5, false}), floats(n, [](size_t i) { return 2.0f * i + 12.0f; }));
          RANK_CHECK_EQ(run({2.0, true}), floats(n, [](size_t i) { return 2.0f * i + 12.0f; }));
          // Uneven reducescatter of 9 rows (3, 2, 2, 2), averaged, in float64.
          std::vector<double> in(n), out(3, -1.0);
          for (size_t i = 0; i < n; ++i) in[i] = static_cast<double>(i) + 4.0 * rank;
          b.nccl()
              .start_reducescatter_scaled({in.data(), dev}, {out.data(), dev}, {3, 2, 2, 2},
                                          DataType::kFloat64, ReduceOp::kSum, {1.0, true})
              ->wait();
          const size_t first = rank == 0 ? 0 : 3 + 2 * static_cast<size_t>(rank - 1);
          const size_t count = rank == 0 ? 3 : 2;
          for (size_t i = 0; i < count; ++i) {
            RANK_CHECK(out[i] == static_cast<double>(first + i) + 6.0);
          }
        },
        std::chrono::milliseconds(0), hosts);
  }
}

TEST_CASE("nccl can_scale: what NCCL does without kernels, and what is left to staging") {
  CHECK(nccl_can_scale(DataType::kFloat16, ReduceOp::kSum, {0.5, true}));
  CHECK(nccl_can_scale(DataType::kInt32, ReduceOp::kSum, {}));
  CHECK(nccl_can_scale(DataType::kBool, ReduceOp::kMax, {}));
  CHECK_FALSE(nccl_can_scale(DataType::kBool, ReduceOp::kSum, {}));
  CHECK_FALSE(nccl_can_scale(DataType::kInt16, ReduceOp::kMax, {}));
  CHECK_FALSE(nccl_can_scale(DataType::kInt32, ReduceOp::kSum, {1.0, true}));
  CHECK_FALSE(nccl_can_scale(DataType::kInt64, ReduceOp::kSum, {2.0, false}));
  CHECK_FALSE(nccl_can_scale(DataType::kFloat32, ReduceOp::kMax, {2.0, false}));
  run_nccl_ranks(1, [](OnDevice& b) {
    std::vector<int16_t> v(4);
    const DLDevice dev{kDLCUDA, b.nccl().device()};
    RANK_CHECK_THROWS(UnsupportedError,
                      b.nccl().start_allreduce({v.data(), dev}, {v.data(), dev}, 4,
                                               DataType::kInt16, ReduceOp::kSum));
    RANK_CHECK_THROWS(UnsupportedError, b.nccl().start_broadcast(cpu_buffer(v.data()), 8, 0));
  });
}

// The failure cases' op: an in-place float32 sum of `v` (which must outlive the completion)
// on this rank's device.
Backend::CompletionPtr start_sum(OnDevice& b, std::vector<float>& v) {
  const DLDevice dev{kDLCUDA, b.nccl().device()};
  return b.nccl().start_allreduce({v.data(), dev}, {v.data(), dev}, v.size(), DataType::kFloat32,
                                  ReduceOp::kSum);
}

// Two ranks: rank 0 runs `body`; rank 1, the bystander, stays alive on the control channel and
// absent from the collective until rank 0's body has ended, however it ended (a failed check
// included: the bystander never outlives it, so a failure fails instead of hanging).
void run_with_bystander(const std::function<void(OnDevice&)>& body,
                        std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
  struct SetOnExit {
    std::atomic<bool>& flag;
    ~SetOnExit() { flag = true; }
  };
  std::atomic<bool> done{false};
  run_nccl_ranks(
      2,
      [&](OnDevice& b) {
        if (b.rank() == 1) {
          while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          return;
        }
        const SetOnExit release{done};
        body(b);
      },
      timeout);
}

TEST_CASE("nccl: a peer that never arrives fails the op at the collective timeout, no hang") {
  run_with_bystander(
      [](OnDevice& b) {
        std::vector<float> v(16, 1.0f);
        auto completion = start_sum(b, v);
        RANK_CHECK_THROWS(TimeoutError, completion->wait());
        RANK_CHECK_THROWS(TimeoutError, b.nccl().start_barrier());  // broken for good
      },
      std::chrono::milliseconds(300));
}

TEST_CASE("nccl: a peer that died (aborted its communicator) fails the op with PeerFailureError") {
  run_nccl_ranks(2, [](OnDevice& b) {
    if (b.rank() == 1) {
      b.abort();  // as its runtime does when its process is going away
      return;
    }
    std::vector<float> v(16, 1.0f);
    auto completion = start_sum(b, v);
    RANK_CHECK_THROWS(PeerFailureError, completion->wait());
  });
}

TEST_CASE("hierarchical nccl: a peer on the other host that died fails the op, no hang") {
  // Rank 3 is gone: rank 2 fails inside its host, rank 1 across hosts; a rank whose stage fails
  // aborts its other communicators, so rank 0 (which shares none with rank 3) fails too, neither
  // waiting for rank 2 nor completing with its partial slice.
  std::atomic<int> failed{0};
  run_nccl_ranks(
      4,
      [&](OnDevice& b) {
        if (b.rank() == 3) {
          b.abort();  // as its runtime does when its process is going away
          return;
        }
        std::vector<float> v(16, 1.0f);
        try {
          start_sum(b, v)->wait();
        } catch (const Error&) {
          ++failed;
        }
      },
      std::chrono::milliseconds(0), 2);
  CHECK(failed.load() == 3);
}

TEST_CASE("nccl: abort() from another thread makes a waiting op throw ShutDownError") {
  run_with_bystander([](OnDevice& b) {
    std::vector<float> v(16, 1.0f);
    auto completion = start_sum(b, v);
    std::jthread aborter([&] { b.abort(); });  // joined however the check ends
    RANK_CHECK_THROWS(ShutDownError, completion->wait());
  });
}

}  // namespace
}  // namespace runrun
