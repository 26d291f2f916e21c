// Every op of the runtime, N ranks as threads over the local backend, exact references.
#include <catch2/catch.hpp>
#include <cstring>
#include <numeric>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;

namespace {

TensorView view_of(std::vector<float>& v, std::vector<int64_t> shape) {
  return TensorView{v.data(), DataType::kFloat32, std::move(shape)};
}
TensorView view_of(std::vector<int32_t>& v, std::vector<int64_t> shape) {
  return TensorView{v.data(), DataType::kInt32, std::move(shape)};
}

}  // namespace

TEST_CASE("allreduce sum, average, min, max, product in and out of place", "[core]") {
  for (int size : {2, 4}) {
    run_ranks(size, [size](int rank, Runtime& rt) {
      const size_t n = 1003;
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax,
                          ReduceOp::kProduct}) {
        for (bool in_place : {true, false}) {
          std::vector<int32_t> in(n), out(n, -7);
          for (size_t i = 0; i < n; ++i) in[i] = static_cast<int32_t>((i % 5) + rank + 1);
          std::vector<int32_t> expected(n);
          for (size_t i = 0; i < n; ++i) {
            int64_t acc = op == ReduceOp::kProduct ? 1 : (op == ReduceOp::kMin ? 1 << 30 : 0);
            if (op == ReduceOp::kMax) acc = -(1 << 30);
            for (int r = 0; r < size; ++r) {
              int64_t v = static_cast<int64_t>((i % 5) + static_cast<size_t>(r) + 1);
              if (op == ReduceOp::kSum || op == ReduceOp::kAverage) acc += v;
              if (op == ReduceOp::kMin) acc = std::min(acc, v);
              if (op == ReduceOp::kMax) acc = std::max(acc, v);
              if (op == ReduceOp::kProduct) acc *= v;
            }
            if (op == ReduceOp::kAverage) acc /= size;
            expected[i] = static_cast<int32_t>(acc);
          }
          AllreduceOptions options;
          options.op = op;
          std::string name = "t." + std::string(reduce_op_name(op)) + (in_place ? ".in" : ".out");
          auto handle = rt.allreduce(name, view_of(in, {static_cast<int64_t>(n)}),
                                     in_place ? view_of(in, {static_cast<int64_t>(n)})
                                              : view_of(out, {static_cast<int64_t>(n)}),
                                     options);
          require_ok(*handle);
          RANK_CHECK((in_place ? in : out) == expected);
        }
      }
    });
  }
}

TEST_CASE("allreduce applies prescale and postscale around the reduction", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<float> x(9, static_cast<float>(rank + 1));
    AllreduceOptions options;
    options.op = ReduceOp::kSum;
    options.prescale = 2.0;
    options.postscale = 0.25;
    require_ok(*rt.allreduce("scaled", view_of(x, {3, 3}), view_of(x, {3, 3}), options));
    for (float v : x) RANK_CHECK(v == (2.0f * 1 + 2.0f * 2) * 0.25f);
  });
}

TEST_CASE("allgather concatenates first dimensions that differ per rank", "[core]") {
  for (int size : {2, 4}) {
    run_ranks(size, [size](int rank, Runtime& rt) {
      std::vector<int32_t> in(static_cast<size_t>((rank + 1) * 3));
      std::iota(in.begin(), in.end(), rank * 100);
      auto handle = rt.allgather({"gather"}, {view_of(in, {rank + 1, 3})}, 0);
      require_ok(*handle);
      auto out = handle->take_output(0);
      RANK_CHECK(out.has_value());
      int64_t rows = 0;
      std::vector<int32_t> expected;
      for (int r = 0; r < size; ++r) {
        rows += r + 1;
        for (int i = 0; i < (r + 1) * 3; ++i) expected.push_back(r * 100 + i);
      }
      RANK_CHECK((out->shape == std::vector<int64_t>{rows, 3}));
      const auto* data = reinterpret_cast<const int32_t*>(out->storage.get());
      RANK_CHECK(std::vector<int32_t>(data, data + expected.size()) == expected);
    });
  }
}

TEST_CASE("broadcast from every root, in and out of place", "[core]") {
  run_ranks(4, [](int rank, Runtime& rt) {
    for (int root = 0; root < 4; ++root) {
      std::vector<float> in(7, static_cast<float>(rank * 10 + root));
      std::vector<float> out(7, -1.0f);
      require_ok(
          *rt.broadcast("b" + std::to_string(root), view_of(in, {7}), view_of(out, {7}), root, 0));
      for (float v : out) RANK_CHECK(v == static_cast<float>(root * 10 + root));
      require_ok(
          *rt.broadcast("bi" + std::to_string(root), view_of(in, {7}), view_of(in, {7}), root, 0));
      for (float v : in) RANK_CHECK(v == static_cast<float>(root * 10 + root));
    }
    require_ok(*rt.barrier(0));
  });
}

TEST_CASE("alltoall with explicit and equal splits", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    // rank 0 sends 1 row to 0 and 2 rows to 1; rank 1 sends 3 rows to 0 and 0 rows to 1.
    std::vector<int64_t> splits =
        rank == 0 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{3, 0};
    std::vector<int32_t> in(3 * 2);
    for (size_t i = 0; i < in.size(); ++i) in[i] = rank * 100 + static_cast<int32_t>(i);
    auto handle = rt.alltoall("a2a", view_of(in, {3, 2}), splits, 0);
    require_ok(*handle);
    auto out = handle->take_output(0);
    const auto* d = reinterpret_cast<const int32_t*>(out->storage.get());
    std::vector<int32_t> got(d, d + out->num_bytes() / 4);
    if (rank == 0) {
      RANK_CHECK((got == std::vector<int32_t>{0, 1, 100, 101, 102, 103, 104, 105}));
      RANK_CHECK((handle->received_splits() == std::vector<int64_t>{1, 3}));
    } else {
      RANK_CHECK((got == std::vector<int32_t>{2, 3, 4, 5}));
      RANK_CHECK((handle->received_splits() == std::vector<int64_t>{2, 0}));
    }
  });
}

TEST_CASE("reducescatter gives the first ranks one extra row when uneven", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<float> in(5 * 2);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<float>(i + static_cast<size_t>(rank));
    AllreduceOptions options;
    options.op = ReduceOp::kSum;
    auto handle = rt.reducescatter({"rs"}, {view_of(in, {5, 2})}, options);
    require_ok(*handle);
    auto out = handle->take_output(0);
    int64_t rows = rank == 0 ? 3 : 2;
    RANK_CHECK((out->shape == std::vector<int64_t>{rows, 2}));
    const auto* d = reinterpret_cast<const float*>(out->storage.get());
    size_t offset = rank == 0 ? 0 : 6;
    for (size_t i = 0; i < static_cast<size_t>(rows * 2); ++i) {
      RANK_CHECK(d[i] == static_cast<float>(2 * (offset + i) + 1));
    }
  });
}

TEST_CASE("large allgather outputs (mapped memory, 4 MiB and more) are exact", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    const int64_t rows = (17 << 20) / 4;  // 17 MiB of int32 per rank: a 34 MiB output
    std::vector<int32_t> in(static_cast<size_t>(rows));
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<int32_t>(i * 2 + static_cast<size_t>(rank));
    auto handle = rt.allgather({"big"}, {view_of(in, {rows})}, 0);
    require_ok(*handle);
    auto out = handle->take_output(0);
    RANK_CHECK(out.has_value() && out->num_bytes() == static_cast<size_t>(2 * rows * 4));
    const auto* d = reinterpret_cast<const int32_t*>(out->storage.get());
    for (int r = 0; r < 2; ++r) {
      for (int64_t i = 0; i < rows; i += 4099) {
        RANK_CHECK(d[r * rows + i] == static_cast<int32_t>(i * 2 + r));
      }
    }
  });
}

TEST_CASE("reducescatter of zero-width rows still splits the first dimension", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<float> in(1, 0.0f);  // no elements, but a valid pointer
    AllreduceOptions options;
    options.op = ReduceOp::kSum;
    auto handle = rt.reducescatter({"empty_rows"}, {view_of(in, {5, 0})}, options);
    require_ok(*handle);
    auto out = handle->take_output(0);
    RANK_CHECK((out->shape == std::vector<int64_t>{rank == 0 ? 3 : 2, 0}));
  });
}
