// Through the runtime (core/execution/device_collectives.h), the hierarchical allreduce of CUDA
// tensors with
// RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=staging against RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS=nccl:
// 4 thread-ranks on a local world of 2 hosts x 2 ranks, the fake CUDA runtime and NCCL. The same
// ops under both (a fused, uneven, averaged and pre/postscaled bucket; every reduce op of int32
// over an uneven count) give the same exact results, and staging makes exactly one NCCL call
// fewer per op and rank: the stage across hosts went over the host backend (the local one).
// Built into cuda_nccl_tests (cuda_staging_test.cc with the fake NCCL).

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../core/rank_threads.h"
#include "fake_cuda.h"
#include "runrun/c_api.h"
#include "tests/support/backend_conformance_values.h"

namespace runrun {
namespace {

using Bytes = std::vector<std::byte>;

// A CUDA tensor of int64 `values` stored as `type`, written on the framework's `stream`.
struct CudaTensor {
  Bytes staged;  // the host source of the asynchronous write
  std::unique_ptr<testing::DeviceBytes> bytes;
  TensorView view;
  CudaTensor(DataType type, const std::vector<int64_t>& values, int device, CUstream_st* stream)
      : staged(values.size() * element_size(type)),
        bytes(std::make_unique<testing::DeviceBytes>(staged.size())) {
    for (size_t i = 0; i < values.size(); ++i) {
      conformance::store(type, staged.data(), i, values[i]);
    }
    bytes->write_async(staged, stream);
    view =
        TensorView{bytes->data(), type, {static_cast<int64_t>(values.size())}, {kDLCUDA, device}};
  }
  // The values read back on `stream`; throws naming `what` unless they are `expected`.
  void check(const std::vector<int64_t>& expected, CUstream_st* stream,
             const std::string& what) const {
    const Bytes got = testing::DeviceBytes::read(view.data, view.num_bytes(), stream);
    for (size_t i = 0; i < expected.size(); ++i) {
      if (conformance::load(view.dtype, got.data(), i) != static_cast<double>(expected[i])) {
        throw std::runtime_error("rank result of " + what + " differs at element " +
                                 std::to_string(i));
      }
    }
  }
};

void run_ops(int rank, Runtime& runtime) {
  const int device = rank;
  CUstream_st* stream = testing::new_framework_stream();
  runrun_set_cuda_stream(stream);
  // Float32 tensors of 3, 1 and 5 elements (one bucket of 9: slices of 5 and 4) holding
  // i + 10t + r, averaged with prescale 4 and postscale 0.5 over 4 ranks: 2 (i + 10t) + 3.
  const std::vector<int64_t> lengths{3, 1, 5};
  std::vector<std::unique_ptr<CudaTensor>> tensors;
  std::vector<TensorView> views;
  std::vector<std::string> names;
  for (size_t t = 0; t < lengths.size(); ++t) {
    std::vector<int64_t> values;
    for (int64_t i = 0; i < lengths[t]; ++i) values.push_back(i + 10 * int64_t(t) + rank);
    tensors.push_back(std::make_unique<CudaTensor>(DataType::kFloat32, values, device, stream));
    views.push_back(tensors.back()->view);
    names.push_back("staged.fused." + std::to_string(t));
  }
  testing::require_ok(*runtime.grouped_allreduce(
      names, views, views, AllreduceOptions{ReduceOp::kAverage, 4.0, 0.5, 0}));
  for (size_t t = 0; t < lengths.size(); ++t) {
    std::vector<int64_t> expected;
    for (int64_t i = 0; i < lengths[t]; ++i) expected.push_back(2 * (i + 10 * int64_t(t)) + 3);
    tensors[t]->check(expected, stream, "the fused average, tensor " + std::to_string(t));
  }
  // Every reduce op of int32 over 7 elements (slices of 4 and 3): rank r holds (r + 1) (i % 3 + 1).
  struct Case {
    ReduceOp op;
    int64_t (*expected)(int64_t base);  // base: i % 3 + 1
  };
  const Case cases[] = {
      {ReduceOp::kSum, [](int64_t base) { return 10 * base; }},
      {ReduceOp::kMin, [](int64_t base) { return base; }},
      {ReduceOp::kMax, [](int64_t base) { return 4 * base; }},
      {ReduceOp::kProduct, [](int64_t base) { return 24 * base * base * base * base; }},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> values, expected;
    for (int64_t i = 0; i < 7; ++i) {
      values.push_back((rank + 1) * (i % 3 + 1));
      expected.push_back(c.expected(i % 3 + 1));
    }
    CudaTensor tensor(DataType::kInt32, values, device, stream);
    const std::string name = "staged." + std::string(reduce_op_name(c.op));
    testing::require_ok(
        *runtime.allreduce(name, tensor.view, tensor.view, AllreduceOptions{c.op, 1.0, 1.0, 0}));
    tensor.check(expected, stream, name);
  }
}

constexpr long kOpsPerRank = 5;  // the fused bucket and the four reduce ops

// NCCL calls of run_ops on 2 hosts x 2 ranks with the stage across hosts over `cross`.
long nccl_calls_with_cross(const std::string& cross) {
  std::atomic<int> hosts{0};
  const long before = fake_nccl_calls();
  testing::run_ranks(
      4,
      [&](int rank, Runtime& runtime) {
        run_ops(rank, runtime);
        if (rank == 0) hosts = runtime.topology().cross_size;
      },
      {{"RUNRUN_HIERARCHICAL_ALLREDUCE", "1"}, {"RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS", cross}}, 2);
  CHECK(hosts.load() == 2);  // the world really had two hosts
  return fake_nccl_calls() - before;
}

TEST_CASE("over NCCL hierarchical (2 hosts x 2 ranks) staged across hosts: exact, no NCCL across",
          "[cuda]") {
  const long over_nccl = nccl_calls_with_cross("nccl");
  const long staged = nccl_calls_with_cross("staging");
  INFO("NCCL calls with the stage across hosts over NCCL: " << over_nccl << ", staged: " << staged);
  // The stages inside the hosts are NCCL calls under both; the stage across is one NCCL call per
  // op and rank over NCCL (every slice is non-empty), none when staged.
  CHECK(over_nccl - staged == kOpsPerRank * 4);
  CHECK(staged >= 2 * kOpsPerRank * 4);  // the reduce-scatters and allgathers are still NCCL's
}

}  // namespace
}  // namespace runrun
