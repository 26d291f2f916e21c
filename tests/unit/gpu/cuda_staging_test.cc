// CUDA tensors end to end without a GPU (issue 11, points 1, 3 and 4): N ranks as threads over
// the local backend enqueue kDLCUDA tensors, which runrun stages through pinned host memory on
// its own stream, against the fake CUDA runtime (fake_cuda_runtime.cc, opened through
// RUNRUN_CUDART_LIBRARY): every op and dtype exact, outputs on the input's device, and the
// stream contract — the op waits for the producer's stream, the framework's stream sees the
// output once the handle completed — checked with streams the fake holds back or delays.
// Built twice: as cuda_staging_tests (staging over the local backend), and with RUNRUN_FAKE_NCCL
// as cuda_nccl_tests, where the fake NCCL (fake_nccl.cc) is found, so the same ops run over the
// NCCL data backend (core/execution/device_collectives.h) — except what NCCL cannot do without a
// kernel
// (int16, a sum of bools, integer scaling and averages), which is still staged.

#include <stdlib.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../core/rank_threads.h"
#include "fake_cuda.h"
#include "common/errors.h"
#include "ops/cuda_streams.h"
#include "ops/device_ops.h"
#include "runrun/c_api.h"
#include "tests/support/backend_conformance_values.h"

namespace runrun {
namespace {

// Before any test runs: the product finds the fake through its variable (searched once).
const bool fake_selected = [] {
  setenv("RUNRUN_CUDART_LIBRARY", RUNRUN_FAKE_CUDART, 1);
#ifdef RUNRUN_FAKE_NCCL
  setenv("RUNRUN_NCCL_LIBRARY", RUNRUN_FAKE_NCCL, 1);
#endif
  return true;
}();

#ifdef RUNRUN_FAKE_NCCL
constexpr bool kOverNccl = true;
#else
constexpr bool kOverNccl = false;
long fake_nccl_calls() { return 0; }
#endif

using Bytes = std::vector<std::byte>;
using conformance::store;

Bytes encode(DataType type, const std::vector<int64_t>& values) {
  Bytes out(values.size() * element_size(type));
  for (size_t i = 0; i < values.size(); ++i) store(type, out.data(), i, values[i]);
  return out;
}

// One rank's view of the framework: its stream (set for the C API's enqueues) and its device.
struct Framework {
  int device;
  CUstream_st* stream = testing::new_framework_stream();
  explicit Framework(int rank) : device(rank) { runrun_set_cuda_stream(stream); }

  // A CUDA tensor of `type`/`shape` holding `values`, written on the framework's stream.
  struct Tensor {
    std::unique_ptr<testing::DeviceBytes> bytes;
    Bytes staged;  // the host source of the asynchronous write
    TensorView view;
  };
  Tensor tensor(DataType type, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
    Tensor t;
    t.staged = encode(type, values);
    t.bytes = std::make_unique<testing::DeviceBytes>(t.staged.size());
    t.bytes->write_async(t.staged, stream);
    t.view = TensorView{t.bytes->data(), type, std::move(shape), {kDLCUDA, device}};
    return t;
  }
  Bytes read(const TensorView& view) const {
    return testing::DeviceBytes::read(view.data, view.num_bytes(), stream);
  }
};

int64_t sum_over_ranks(int size, const std::function<int64_t(int)>& value) {
  int64_t sum = 0;
  for (int r = 0; r < size; ++r) sum += value(r);
  return sum;
}

std::string describe(DataType type, const std::string& what) {
  return std::string(data_type_name(type)) + " " + what;
}

void check_bytes(const Bytes& got, const Bytes& expected, DataType type, const std::string& what) {
  if (got != expected) throw std::runtime_error("wrong result: " + describe(type, what));
}

// Every op on CUDA tensors of one type on one rank; each throws naming the first wrong result.
struct EveryOp {
  EveryOp(int rank_in, Runtime& runtime_in, DataType type_in)
      : rank(rank_in), runtime(runtime_in), type(type_in) {}

  int rank;
  Runtime& runtime;
  DataType type;
  int size = runtime.topology().size;
  Framework fw{rank};
  bool is_bool = type == DataType::kBool;
  std::string tag = std::string(data_type_name(type)) + ".";
  static constexpr size_t n = 7;

  int64_t small(int r, size_t i) const {  // |sum| stays tiny in every dtype
    return is_bool ? static_cast<int64_t>((static_cast<size_t>(r) + i) % 3 == 0)
                   : static_cast<int64_t>((static_cast<size_t>(r) * 3 + i) % 5);
  }
  std::vector<int64_t> values_of(int r) const {
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = small(r, i);
    return v;
  }

  // Allreduce, sum, in place (bool: logical or).
  void allreduce_sum_in_place() {
    auto t = fw.tensor(type, {static_cast<int64_t>(n)}, values_of(rank));
    testing::require_ok(*runtime.allreduce(tag + "sum", t.view, t.view,
                                           AllreduceOptions{ReduceOp::kSum, 1.0, 1.0, 0}));
    std::vector<int64_t> expected(n);
    for (size_t i = 0; i < n; ++i) {
      expected[i] = sum_over_ranks(size, [&](int r) { return small(r, i); });
      if (is_bool) expected[i] = expected[i] != 0;
    }
    check_bytes(fw.read(t.view), encode(type, expected), type, "allreduce sum in place");
  }
  // Out of place with prescale 2 and postscale 0.5: the sum again, exactly.
  void allreduce_scaled_and_average() {
    auto in = fw.tensor(type, {static_cast<int64_t>(n)}, values_of(rank));
    auto out = fw.tensor(type, {static_cast<int64_t>(n)}, std::vector<int64_t>(n, 0));
    testing::require_ok(*runtime.allreduce(tag + "scaled", in.view, out.view,
                                           AllreduceOptions{ReduceOp::kSum, 2.0, 0.5, 0}));
    std::vector<int64_t> expected(n);
    for (size_t i = 0; i < n; ++i) {
      expected[i] = sum_over_ranks(size, [&](int r) { return small(r, i); });
    }
    check_bytes(fw.read(out.view), encode(type, expected), type, "allreduce pre/postscale");
    check_bytes(fw.read(in.view), encode(type, values_of(rank)), type, "input kept");
    // Average of i + 2r over the ranks: i + size - 1, an integer in every dtype.
    std::vector<int64_t> mine(n), expected_avg(n);
    for (size_t i = 0; i < n; ++i) {
      mine[i] = static_cast<int64_t>(i) + 2 * rank;
      expected_avg[i] = static_cast<int64_t>(i) + size - 1;
    }
    auto avg = fw.tensor(type, {static_cast<int64_t>(n)}, mine);
    testing::require_ok(*runtime.allreduce(tag + "average", avg.view, avg.view,
                                           AllreduceOptions{ReduceOp::kAverage, 1.0, 1.0, 0}));
    check_bytes(fw.read(avg.view), encode(type, expected_avg), type, "average");
  }
  // Two tensors in one group: fused into one bucket, staged together.
  void grouped_max() {
    auto a = fw.tensor(type, {3}, {small(rank, 0), small(rank, 1), small(rank, 2)});
    auto b = fw.tensor(type, {2}, {small(rank, 3), small(rank, 4)});
    testing::require_ok(*runtime.grouped_allreduce({tag + "group.a", tag + "group.b"},
                                                   {a.view, b.view}, {a.view, b.view},
                                                   AllreduceOptions{ReduceOp::kMax, 1.0, 1.0, 0}));
    auto max_of = [&](size_t i) {
      int64_t m = small(0, i);
      for (int r = 1; r < size; ++r) m = std::max(m, small(r, i));
      return m;
    };
    check_bytes(fw.read(a.view), encode(type, {max_of(0), max_of(1), max_of(2)}), type,
                "grouped max a");
    check_bytes(fw.read(b.view), encode(type, {max_of(3), max_of(4)}), type, "grouped max b");
  }
  // Allgather with uneven first dimensions: rank r has r + 1 rows of 2.
  void allgather_uneven() {
    std::vector<int64_t> mine;
    for (int row = 0; row <= rank; ++row) {
      mine.push_back(small(rank, static_cast<size_t>(row)));
      mine.push_back(small(rank + 1, static_cast<size_t>(row)));
    }
    auto t = fw.tensor(type, {rank + 1, 2}, mine);
    auto handle = runtime.allgather({tag + "allgather"}, {t.view}, 0);
    testing::require_ok(*handle);
    std::optional<OwnedTensor> out = handle->take_output(0);
    if (!out || out->device.device_type != kDLCUDA || out->device.device_id != fw.device) {
      throw std::runtime_error("allgather output is not on the input's device");
    }
    std::vector<int64_t> expected;
    for (int r = 0; r < size; ++r) {
      for (int row = 0; row <= r; ++row) {
        expected.push_back(small(r, static_cast<size_t>(row)));
        expected.push_back(small(r + 1, static_cast<size_t>(row)));
      }
    }
    check_bytes(fw.read(out->view()), encode(type, expected), type, "allgather");
  }
  // Broadcast from rank 1, out of place.
  void broadcast_out_of_place() {
    auto in = fw.tensor(type, {static_cast<int64_t>(n)}, values_of(rank));
    auto out = fw.tensor(type, {static_cast<int64_t>(n)}, std::vector<int64_t>(n, 0));
    testing::require_ok(*runtime.broadcast(tag + "broadcast", in.view, out.view, 1, 0));
    check_bytes(fw.read(out.view), encode(type, values_of(1)), type, "broadcast");
  }
  // Alltoall with splits: rank r sends p + 1 rows to rank p; a row is (sender, receiver).
  void alltoall_with_splits() {
    std::vector<int64_t> mine, splits;
    for (int p = 0; p < size; ++p) {
      splits.push_back(p + 1);
      for (int row = 0; row <= p; ++row) {
        mine.push_back(small(rank, 0));
        mine.push_back(small(p, 1));
      }
    }
    auto t = fw.tensor(type, {static_cast<int64_t>(mine.size() / 2), 2}, mine);
    auto handle = runtime.alltoall(tag + "alltoall", t.view, splits, 0);
    testing::require_ok(*handle);
    std::optional<OwnedTensor> out = handle->take_output(0);
    if (!out || out->device.device_type != kDLCUDA) {
      throw std::runtime_error("alltoall output is not on the input's device");
    }
    std::vector<int64_t> expected;
    for (int p = 0; p < size; ++p) {
      for (int row = 0; row <= rank; ++row) {
        expected.push_back(small(p, 0));
        expected.push_back(small(rank, 1));
      }
    }
    check_bytes(fw.read(out->view()), encode(type, expected), type, "alltoall");
    if (handle->received_splits() != std::vector<int64_t>(static_cast<size_t>(size), rank + 1)) {
      throw std::runtime_error("alltoall received splits");
    }
  }
  // Reducescatter (sum) with uneven rows: 2 * size + 1 rows of one element.
  void reducescatter_uneven() {
    const int64_t rows = 2 * size + 1;
    std::vector<int64_t> mine(static_cast<size_t>(rows));
    for (size_t i = 0; i < mine.size(); ++i) mine[i] = small(rank, i);
    auto t = fw.tensor(type, {rows}, mine);
    auto handle = runtime.reducescatter({tag + "reducescatter"}, {t.view},
                                        AllreduceOptions{ReduceOp::kSum, 1.0, 1.0, 0});
    testing::require_ok(*handle);
    std::optional<OwnedTensor> out = handle->take_output(0);
    if (!out || out->device.device_type != kDLCUDA) {
      throw std::runtime_error("reducescatter output is not on the input's device");
    }
    const int64_t first_row = 2 * rank + (rank > 0 ? 1 : 0);
    const int64_t my_rows = rank == 0 ? 3 : 2;
    std::vector<int64_t> expected;
    for (int64_t row = first_row; row < first_row + my_rows; ++row) {
      expected.push_back(
          sum_over_ranks(size, [&](int r) { return small(r, static_cast<size_t>(row)); }));
    }
    check_bytes(fw.read(out->view()), encode(type, expected), type, "reducescatter");
  }
};

void run_every_op(int rank, Runtime& runtime, DataType type) {
  EveryOp op(rank, runtime, type);
  op.allreduce_sum_in_place();
  if (!op.is_bool) op.allreduce_scaled_and_average();
  op.grouped_max();
  op.allgather_uneven();
  op.broadcast_out_of_place();
  op.alltoall_with_splits();
  if (!op.is_bool) op.reducescatter_uneven();
}

constexpr DataType kTypes[] = {DataType::kUInt8,    DataType::kInt8,    DataType::kInt16,
                               DataType::kInt32,    DataType::kInt64,   DataType::kFloat16,
                               DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64,
                               DataType::kBool};

TEST_CASE("CUDA tensors over a host backend: every op and dtype exact, outputs on the device",
          "[cuda]") {
  REQUIRE(fake_selected);
  fake_cuda_set_delay_us(20);  // stream work runs late: a missing wait reads stale bytes
  const long calls_before = fake_nccl_calls();
  for (int size : {2, 4}) {
    INFO("ranks: " << size);
    testing::run_ranks(size, [](int rank, Runtime& runtime) {
      for (DataType type : kTypes) run_every_op(rank, runtime, type);
    });
  }
  fake_cuda_set_delay_us(0);
  // Over the fake NCCL, the ops NCCL can do went through it (one call per rank and op at least).
  CHECK((fake_nccl_calls() - calls_before > 100) == kOverNccl);
}

#ifdef RUNRUN_FAKE_NCCL
// A bucket of three float32 tensors of 3, 1 and 5 elements (9 in all: uneven over 2 or 4
// ranks), named `prefix`.0 to .2, where rank r holds i + 10 * t + r (t: the tensor).
struct Bucket {
  std::vector<int64_t> lengths{3, 1, 5};
  std::vector<Framework::Tensor> tensors;
  std::vector<TensorView> views;
  std::vector<std::string> names;

  Bucket(Framework& fw, int rank, const std::string& prefix) {
    for (size_t t = 0; t < lengths.size(); ++t) {
      std::vector<int64_t> values;
      for (int64_t i = 0; i < lengths[t]; ++i) values.push_back(base(t, i) + rank);
      tensors.push_back(fw.tensor(DataType::kFloat32, {lengths[t]}, values));
      views.push_back(tensors.back().view);
      names.push_back(prefix + "." + std::to_string(t));
    }
  }
  static int64_t base(size_t t, int64_t i) { return i + 10 * static_cast<int64_t>(t); }

  // Throws unless element i of tensor t holds expected(i + 10 * t).
  void check(const Framework& fw, const std::function<int64_t(int64_t)>& expected,
             const std::string& what) const {
    for (size_t t = 0; t < lengths.size(); ++t) {
      std::vector<int64_t> values;
      for (int64_t i = 0; i < lengths[t]; ++i) values.push_back(expected(base(t, i)));
      check_bytes(fw.read(views[t]), encode(DataType::kFloat32, values), DataType::kFloat32,
                  what + ", tensor " + std::to_string(t));
    }
  }
};

TEST_CASE("over NCCL: a fused bucket is one NCCL call on the device fusion buffer, scaled by NCCL",
          "[cuda]") {
  REQUIRE(fake_selected);
  std::atomic<long> calls_in_group{-1};
  std::atomic<int> arrived{0};
  testing::run_ranks(2, [&](int rank, Runtime& runtime) {
    Framework fw(rank);
    const Bucket bucket(fw, rank, "fused");
    // Both ranks enqueue after the other one's last op ended, so the counter brackets this op.
    ++arrived;
    while (arrived.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const long before = fake_nccl_calls();
    // Average with prescale 4 and postscale 1.5 over 2 ranks: 3 * sum, by one pre-multiplied
    // sum with factor 4 * 1.5 / 2 (the staged path would scale on the host instead).
    testing::require_ok(
        *runtime.grouped_allreduce(bucket.names, bucket.views, bucket.views,
                                   AllreduceOptions{ReduceOp::kAverage, 4.0, 1.5, 0}));
    const long after = fake_nccl_calls();
    if (rank == 0) calls_in_group = after - before;
    bucket.check(fw, [](int64_t v) { return 3 * (2 * v + 1); }, "fused scaled average");
  });
  // One ncclAllReduce per rank for the three tensors (the other rank's call may land either
  // side of rank 0's bracket, so 1 or 2 — never 3 per rank as unfused).
  CHECK(calls_in_group.load() >= 1);
  CHECK(calls_in_group.load() <= 2);
}

TEST_CASE("over NCCL hierarchical (2 hosts x 2 ranks): fused uneven averaged bucket is exact",
          "[cuda]") {
  REQUIRE(fake_selected);
  std::atomic<long> buckets{0};
  const long calls_before = fake_nccl_calls();
  testing::run_ranks(
      4,
      [&](int rank, Runtime& runtime) {
        Framework fw(rank);
        // The bucket's 9 elements are not divisible by the 2 ranks of a host.
        const Bucket bucket(fw, rank, "hier");
        // Average with prescale 4 and postscale 0.5 over 4 ranks: sum / 2, scaled once.
        testing::require_ok(
            *runtime.grouped_allreduce(bucket.names, bucket.views, bucket.views,
                                       AllreduceOptions{ReduceOp::kAverage, 4.0, 0.5, 0}));
        // (4 * v + 6) / 2
        bucket.check(fw, [](int64_t v) { return 2 * v + 3; }, "hierarchical fused average");
        // Max of int32 over 7 elements (uneven slices 4 + 3): the largest rank's values.
        auto m = fw.tensor(DataType::kInt32, {7}, std::vector<int64_t>(7, 100 * rank - 5));
        testing::require_ok(*runtime.allreduce("hier.max", m.view, m.view,
                                               AllreduceOptions{ReduceOp::kMax, 1.0, 1.0, 0}));
        check_bytes(fw.read(m.view), encode(DataType::kInt32, std::vector<int64_t>(7, 295)),
                    DataType::kInt32, "hierarchical max");
        if (rank == 0) buckets = static_cast<long>(runtime.topology().cross_size);
      },
      {{"RUNRUN_HIERARCHICAL_ALLREDUCE", "1"}}, 2);
  CHECK(buckets.load() == 2);  // the world really had two hosts
  const long calls = fake_nccl_calls() - calls_before;
  // Flat: one NCCL call per op and rank (8); hierarchical: at least a reduce-scatter, an
  // allreduce and an allgather per op and rank (24; 40 with the uneven ones as grouped calls).
  CHECK(calls >= 24);
}
#endif

// A rank body that allreduces [rank + 1] * 4 (float32, in place) and returns the result read on
// the framework's stream; `before` runs between the write and the enqueue, `after` between the
// enqueue and the wait.
std::vector<float> allreduce_once(int rank, Runtime& runtime, const std::string& name,
                                  const std::function<void(Framework&)>& before,
                                  const std::function<void(Framework&)>& after) {
  Framework fw(rank);
  before(fw);
  auto t = fw.tensor(DataType::kFloat32, {4}, std::vector<int64_t>(4, rank + 1));
  auto handle =
      runtime.allreduce(name, t.view, t.view, AllreduceOptions{ReduceOp::kSum, 1.0, 1.0, 0});
  after(fw);
  testing::require_ok(*handle);
  Bytes got = fw.read(t.view);
  std::vector<float> values(4);
  std::memcpy(values.data(), got.data(), got.size());
  return values;
}

TEST_CASE("the op waits for the producer's stream before it reads the tensor", "[cuda]") {
  REQUIRE(fake_selected);
  // The framework's stream is held: the tensor's values are written only when it is released,
  // well after the enqueue. An op that read without waiting on the producer event would reduce
  // the zeros the tensor held before.
  testing::run_ranks(2, [](int rank, Runtime& runtime) {
    const auto got = allreduce_once(
        rank, runtime, "produced.late", [](Framework& fw) { fake_cuda_hold_stream(fw.stream); },
        [](Framework& fw) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          fake_cuda_release_stream(fw.stream);
        });
    RANK_CHECK(got == std::vector<float>(4, 3.0f));
  });
}

TEST_CASE("the framework's stream sees the output once the handle completed", "[cuda]") {
  REQUIRE(fake_selected);
  // runrun's stream runs late: its copies back to the device finish long after the host
  // collective and the handle's completion. A framework stream that was not made to wait on the
  // completion event would read the input instead of the sum.
  testing::run_ranks(2, [](int rank, Runtime& runtime) {
    fake_cuda_set_stream_delay_us(gpu::runrun_stream(rank), 100000);
    const auto got =
        allreduce_once(rank, runtime, "consumed.early", [](Framework&) {}, [](Framework&) {});
    fake_cuda_set_stream_delay_us(gpu::runrun_stream(rank), -1);
    RANK_CHECK(got == std::vector<float>(4, 3.0f));
  });
}

TEST_CASE("DeviceOps of a CUDA device copy and zero on runrun's stream, and do no arithmetic",
          "[cuda]") {
  REQUIRE(fake_selected);
  const DeviceOps& ops = device_ops_for({kDLCUDA, 1});
  CHECK(same_device(ops.device(), DLDevice{kDLCUDA, 1}));
  CUstream_st* stream = gpu::runrun_stream(1);
  fake_cuda_set_stream_delay_us(stream, 2000);  // a copy that did not use the stream reads zeros
  testing::DeviceBytes a(16), b(16);
  const Bytes sevens(16, std::byte{7});
  a.write_async(sevens, stream);
  ops.copy(b.data(), a.data(), 16);
  CHECK(testing::DeviceBytes::read(b.data(), 16, stream) == sevens);
  ops.zero(b.data(), 16);
  CHECK(testing::DeviceBytes::read(b.data(), 16, stream) == Bytes(16));
  fake_cuda_set_stream_delay_us(stream, -1);
  CHECK_THROWS_AS(ops.scale(b.data(), 4, DataType::kFloat32, 2.0), UnsupportedError);
  CHECK_THROWS_AS(ops.divide(b.data(), 4, DataType::kFloat32, 2), UnsupportedError);
}

TEST_CASE("runrun_set_cuda_stream sets the calling thread's framework stream", "[cuda]") {
  REQUIRE(fake_selected);
  CUstream_st* stream = testing::new_framework_stream();
  runrun_set_cuda_stream(stream);
  CHECK(runrun_cuda_stream() == static_cast<void*>(stream));
  runrun_set_cuda_stream(nullptr);
  CHECK(runrun_cuda_stream() == nullptr);
}

}  // namespace
}  // namespace runrun
