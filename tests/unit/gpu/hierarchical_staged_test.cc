// The hierarchical allreduce of CUDA tensors with its stage across hosts staged through pinned
// host memory over a host backend (RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=staging; ops/hierarchical/
// staged_allreduce_backend.h), without a GPU: 4 thread-ranks that report 2 hosts x 2 ranks, each
// with an NCCL backend on cuda:rank (the fake NCCL and CUDA runtime) for the stages inside a host
// and the local backend (ranks as threads) for the stage across. Exact results (the conformance
// suite's allreduce: every reduce op and dtype NCCL does, uneven counts, in and out of place),
// scaling applied once, the stage across going over the host backend (its call counter, and one
// NCCL call fewer per rank than over NCCL), and a dead peer across hosts failing every survivor.

#include <stdlib.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "ops/device_backend.h"
#include "ops/hierarchical/flat_forwarding.h"
#include "ops/hierarchical/hierarchical_device_backend.h"
#include "tests/support/backend_conformance.h"
#include "tests/unit/gpu/fake_cuda.h"
#include "tests/unit/ops/local_ranks.h"

namespace runrun {
namespace {

const bool fakes_selected = [] {
  setenv("RUNRUN_CUDART_LIBRARY", RUNRUN_FAKE_CUDART, 1);
  setenv("RUNRUN_NCCL_LIBRARY", RUNRUN_FAKE_NCCL, 1);
  return true;
}();

// A host backend that counts the allreduces run over it and over its subgroups (the groups the
// stage across hosts is made of).
class CountingHost final : public FlatForwarding<Backend> {
 public:
  CountingHost(std::unique_ptr<Backend> flat, std::shared_ptr<std::atomic<long>> allreduces)
      : FlatForwarding(std::move(flat)), allreduces_(std::move(allreduces)) {}
  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override {
    ++*allreduces_;
    return flat_->start_allreduce(in, out, count, type, op);
  }
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override {
    std::unique_ptr<Backend> sub = flat_->create_subgroup(ranks);
    if (!sub) return nullptr;
    return std::make_unique<CountingHost>(std::move(sub), allreduces_);
  }

 private:
  std::shared_ptr<std::atomic<long>> allreduces_;
};

// The conformance suite's allreduce hands host buffers; with the fake runtime host memory is
// device memory, so this hands them to the hierarchical backend as memory of its device.
class AllreduceOnDevice final : public FlatForwarding<Backend> {
 public:
  explicit AllreduceOnDevice(std::unique_ptr<DeviceBackend> hierarchical)
      : FlatForwarding(nullptr), device_(hierarchical->device()) {
    flat_ = std::move(hierarchical);
  }
  CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type,
                                ReduceOp op) override {
    return flat_->start_allreduce({in.data, {kDLCUDA, device_}}, {out.data, {kDLCUDA, device_}},
                                  count, type, op);
  }
  DeviceBackend& device_backend() { return static_cast<DeviceBackend&>(*flat_); }

 private:
  int device_;
};

struct Ranks {
  std::shared_ptr<std::atomic<long>> host_allreduces = std::make_shared<std::atomic<long>>(0);
  std::vector<std::exception_ptr> errors;
};

// Runs `body` on 4 thread-ranks, hosts {0, 1} and {2, 3}: the hierarchical backend over NCCL
// inside hosts, its stage across hosts over the local backend (counted); every rank's error.
Ranks run_staged(const std::function<void(AllreduceOnDevice&)>& body) {
  REQUIRE(fakes_selected);
  REQUIRE(nccl_unusable_reason().empty());
  Ranks ranks;
  auto world = std::make_shared<LocalWorld>(4);
  ranks.errors = testing::run_ranks_collect(world, [&](LocalBackend& local) {
    const int rank = local.rank();
    const Topology topology{rank, 4, rank % 2, 2, rank / 2, 2};
    CountingHost host(local.create_subgroup({0, 1, 2, 3}), ranks.host_allreduces);
    std::unique_ptr<DeviceBackend> nccl = make_nccl_backend(
        local.create_control_channel(), topology, rank, std::chrono::milliseconds(0), nullptr);
    std::string why_not;
    nccl = make_hierarchical_device(std::move(nccl), topology, &why_not, &host);
    RANK_CHECK_EQ(why_not, "");
    auto* hierarchical = dynamic_cast<HierarchicalDeviceBackend*>(nccl.get());
    RANK_CHECK(hierarchical != nullptr);
    RANK_CHECK_EQ(std::string(hierarchical->cross().name()), "local");  // not nccl
    AllreduceOnDevice backend(std::move(nccl));
    body(backend);
  });
  return ranks;
}

std::vector<float> floats(size_t n, const std::function<float(size_t)>& f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = f(i);
  return v;
}

TEST_CASE("hierarchical staged across hosts (2 hosts x 2 ranks): allreduce conformance") {
  // Every reduce op and dtype NCCL does, counts 0, 1, 7, 65539 and 100003 (uneven slices, fewer
  // elements than ranks), in place and not, compared exactly with a reference.
  conformance::Options options;
  options.large_count = 100003;
  options.reduces = [](DataType type, ReduceOp op) { return nccl_can_scale(type, op, {}); };
  const Ranks ranks =
      run_staged([&](AllreduceOnDevice& b) { conformance::check_allreduce(b, options); });
  testing::rethrow_root_cause(ranks.errors);
  CHECK(ranks.host_allreduces->load() > 100);
}

TEST_CASE("hierarchical staged across hosts: one host allreduce per rank, two NCCL calls") {
  const long nccl_before = fake_nccl_calls();
  const Ranks ranks = run_staged([](AllreduceOnDevice& b) {
    std::vector<float> v(8, static_cast<float>(b.rank()));
    b.allreduce(v.data(), v.data(), 8, DataType::kFloat32, ReduceOp::kSum);
    RANK_CHECK(v == std::vector<float>(8, 6.0f));
  });
  testing::rethrow_root_cause(ranks.errors);
  // Each rank: the reduce-scatter and the allgather inside its host over NCCL (over NCCL across
  // hosts too it would be 3 calls, 12 in all), the stage across over the host backend.
  CHECK(fake_nccl_calls() - nccl_before == 8);
  CHECK(ranks.host_allreduces->load() == 4);
}

TEST_CASE("hierarchical staged across hosts: average and pre/postscale applied once") {
  const Ranks ranks = run_staged([](AllreduceOnDevice& b) {
    const int rank = b.rank();
    DeviceBackend& device = b.device_backend();
    const DLDevice dev{kDLCUDA, device.device()};
    const size_t n = 9;  // slices of 5 and 4
    auto mine = floats(n, [&](size_t i) { return static_cast<float>(i) + 4.0f * rank; });
    // sum over ranks r of i + 4r = 4i + 24
    auto run = [&](DeviceReduceScaling scaling) {
      std::vector<float> in = mine, out(n, -1.0f);
      device
          .start_allreduce_scaled({in.data(), dev}, {out.data(), dev}, n, DataType::kFloat32,
                                  ReduceOp::kSum, scaling)
          ->wait();
      return out;
    };
    RANK_CHECK_EQ(run({1.0, true}), floats(n, [](size_t i) { return i + 6.0f; }));
    RANK_CHECK_EQ(run({0.5, false}), floats(n, [](size_t i) { return 2.0f * i + 12.0f; }));
    RANK_CHECK_EQ(run({2.0, true}), floats(n, [](size_t i) { return 2.0f * i + 12.0f; }));
    // float64 in place, averaged with a factor of 3 (prescale x postscale): 3 (i + 6).
    std::vector<double> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = static_cast<double>(i) + 4.0 * rank;
    device
        .start_allreduce_scaled({d.data(), dev}, {d.data(), dev}, n, DataType::kFloat64,
                                ReduceOp::kSum, {3.0, true})
        ->wait();
    for (size_t i = 0; i < n; ++i) RANK_CHECK(d[i] == 3.0 * (static_cast<double>(i) + 6.0));
  });
  testing::rethrow_root_cause(ranks.errors);
}

TEST_CASE("hierarchical staged across hosts: a dead peer fails every survivor, no hang") {
  // The dead rank is 3 (its cross peer, rank 1, fails in the host stage; rank 2 inside its
  // host; rank 0 shares no group with rank 3 and fails once its peers abort theirs), then 1.
  for (int dead : {3, 1}) {
    INFO("dead rank: " << dead);
    std::atomic<int> failed{0};
    const Ranks ranks = run_staged([&](AllreduceOnDevice& b) {
      if (b.rank() == dead) {
        b.abort();  // as its runtime does when its process is going away
        return;
      }
      std::vector<float> v(16, 1.0f);
      try {
        b.allreduce(v.data(), v.data(), 16, DataType::kFloat32, ReduceOp::kSum);
      } catch (const Error&) {
        ++failed;
      }
    });
    testing::rethrow_root_cause(ranks.errors);
    CHECK(failed.load() == 3);
  }
}

}  // namespace
}  // namespace runrun
