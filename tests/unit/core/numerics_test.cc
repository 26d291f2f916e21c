// Horovod's numerics, N ranks as threads over the local backend: integer prescale/postscale
// truncate through double, an average folds 1/size into the postscale, joined ranks count in
// the average's divisor (RUNRUN_JOIN_AVERAGE), and every dtype goes through every op.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;

namespace {

template <typename T>
constexpr DataType type_of() {
  if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
  if constexpr (std::is_same_v<T, uint8_t>) return DataType::kUInt8;
  if constexpr (std::is_same_v<T, int16_t>) return DataType::kInt16;
  if constexpr (std::is_same_v<T, int32_t>) return DataType::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return DataType::kInt64;
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DataType::kFloat64;
}

template <typename T>
TensorView view(std::vector<T>& v, std::vector<int64_t> shape) {
  return TensorView{v.data(), type_of<T>(), std::move(shape)};
}

template <typename T>
std::vector<T> copy_out(Handle& handle, size_t index) {
  auto out = handle.take_output(index);
  if (!out) throw std::runtime_error("no output " + std::to_string(index));
  std::vector<T> values(out->num_bytes() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), out->storage.get(), out->num_bytes());
  return values;
}

// What rank `rank` contributes at element i: odd and even, negative and positive, so a factor
// of 0.5 lands on halves where truncation and rounding differ.
int64_t input_at(int rank, size_t i) { return static_cast<int64_t>(i % 11) - 5 + 3 * rank; }

// Horovod's integer scaling: the product in double, truncated toward zero.
int64_t scaled(int64_t value, double factor) {
  return static_cast<int64_t>(static_cast<double>(value) * factor);
}

// Element i of the reduction, as Horovod computes it: prescale each contribution, sum, then
// multiply by postscale (divided by the set size for an average).
int64_t horovod_reduced(int size, size_t i, const AllreduceOptions& o) {
  int64_t sum = 0;
  for (int r = 0; r < size; ++r) sum += scaled(input_at(r, i), o.prescale);
  const double post = o.op == ReduceOp::kAverage ? o.postscale / size : o.postscale;
  return scaled(sum, post);
}

template <typename T>
std::vector<T> inputs(int rank, size_t n, size_t shift) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(input_at(rank, i + shift));
  return v;
}

template <typename T>
std::vector<T> expected_range(int size, const AllreduceOptions& o, size_t first, size_t n) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(horovod_reduced(size, first + i, o));
  return v;
}

// Allreduce (alone and as a fused group) and reducescatter (alone and grouped) of integers of
// type T with the options `o`; every result must equal Horovod's.
template <typename T>
void check_scaled_integer_ops(int rank, int size, Runtime& rt, const AllreduceOptions& o,
                              const std::string& tag) {
  const size_t n = 37;
  auto single = inputs<T>(rank, n, 0);
  require_ok(*rt.allreduce(tag + ".single", view(single, {37}), view(single, {37}), o));
  RANK_CHECK(single == expected_range<T>(size, o, 0, n));

  auto a = inputs<T>(rank, n, 0), b = inputs<T>(rank, 5, 3);
  require_ok(*rt.grouped_allreduce({tag + ".ga", tag + ".gb"}, {view(a, {37}), view(b, {5})},
                                   {view(a, {37}), view(b, {5})}, o));
  RANK_CHECK(a == expected_range<T>(size, o, 0, n));
  RANK_CHECK(b == expected_range<T>(size, o, 3, 5));

  const int64_t rows = 2 * size + 1;  // uneven: the first rank gets one row more
  const int64_t my_rows = rows / size + (rank < rows % size ? 1 : 0);
  const int64_t first_row = rank * (rows / size) + std::min<int64_t>(rank, rows % size);
  auto rs = inputs<T>(rank, static_cast<size_t>(rows * 3), 0);
  auto rs2 = inputs<T>(rank, static_cast<size_t>(rows * 3), 0);
  const auto want = expected_range<T>(size, o, static_cast<size_t>(first_row * 3),
                                      static_cast<size_t>(my_rows * 3));
  auto h = rt.reducescatter({tag + ".rs"}, {view(rs, {rows, 3})}, o);
  require_ok(*h);
  RANK_CHECK(copy_out<T>(*h, 0) == want);
  auto hg = rt.reducescatter({tag + ".rsa", tag + ".rsb"},
                             {view(rs, {rows, 3}), view(rs2, {rows, 3})}, o);
  require_ok(*hg);
  RANK_CHECK(copy_out<T>(*hg, 0) == want);
  RANK_CHECK(copy_out<T>(*hg, 1) == want);
}

template <typename T>
void check_all_scalings(int rank, int size, Runtime& rt, const std::string& type_tag) {
  int step = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
    for (auto [pre, post] : {std::pair{0.5, 1.0}, std::pair{1.0, 1.5}, std::pair{0.5, 1.5},
                             std::pair{1.0, 1.0}, std::pair{-0.75, 0.3}}) {
      AllreduceOptions o;
      o.op = op;
      o.prescale = pre;
      o.postscale = post;
      check_scaled_integer_ops<T>(rank, size, rt, o, type_tag + "." + std::to_string(step++));
    }
  }
}

}  // namespace

TEST_CASE("integer prescale and postscale truncate through double, as Horovod",
          "[core][numerics]") {
  for (int size : {2, 3}) {
    run_ranks(size, [size](int rank, Runtime& rt) {
      check_all_scalings<int8_t>(rank, size, rt, "i8");
      check_all_scalings<int16_t>(rank, size, rt, "i16");
      check_all_scalings<int32_t>(rank, size, rt, "i32");
      check_all_scalings<int64_t>(rank, size, rt, "i64");
    });
  }
}

TEST_CASE("an integer average is the sum times postscale / size, truncated", "[core][numerics]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    // 3 + 4 = 7: 7 * (3 / 2) = 10.5 -> 10 (dividing first, 7 / 2 = 3, and scaling gives 9).
    std::vector<int32_t> x{rank == 0 ? 3 : 4, rank == 0 ? -3 : -4};
    AllreduceOptions o;
    o.op = ReduceOp::kAverage;
    o.postscale = 3.0;
    require_ok(*rt.allreduce("avg.post", view(x, {2}), view(x, {2}), o));
    RANK_CHECK((x == std::vector<int32_t>{10, -10}));
  });
}

namespace {

// Rank 1 joins at once; rank 0 averages an int32 tensor, a float tensor (alone: unfused) and a
// group of both (fused), then joins. Each result must equal sum * factor.
void run_join_average(double factor) {
  run_ranks(
      2,
      [factor](int rank, Runtime& rt) {
        if (rank == 1) {
          require_ok(*rt.join(0));
          return;
        }
        AllreduceOptions o;
        o.op = ReduceOp::kAverage;
        std::vector<int32_t> i{9, -9, 4};
        std::vector<double> d{10.0, 3.0};
        require_ok(*rt.allreduce("join.i", view(i, {3}), view(i, {3}), o));
        require_ok(*rt.allreduce("join.d", view(d, {2}), view(d, {2}), o));
        const std::vector<int32_t> want_i{static_cast<int32_t>(scaled(9, factor)),
                                          static_cast<int32_t>(scaled(-9, factor)),
                                          static_cast<int32_t>(scaled(4, factor))};
        const std::vector<double> want_d{10.0 * factor, 3.0 * factor};
        RANK_CHECK(i == want_i);
        RANK_CHECK(d == want_d);
        // Groups of one dtype: fused into one collective on rank 0, zeros from the joined rank.
        std::vector<int32_t> gi{9, -9, 4}, gi2{9, -9, 4};
        std::vector<double> gd{10.0, 3.0}, gd2{10.0, 3.0};
        require_ok(*rt.grouped_allreduce({"join.gi", "join.gi2"}, {view(gi, {3}), view(gi2, {3})},
                                         {view(gi, {3}), view(gi2, {3})}, o));
        require_ok(*rt.grouped_allreduce({"join.gd", "join.gd2"}, {view(gd, {2}), view(gd2, {2})},
                                         {view(gd, {2}), view(gd2, {2})}, o));
        RANK_CHECK(gi == want_i && gi2 == want_i);
        RANK_CHECK(gd == want_d && gd2 == want_d);
        require_ok(*rt.join(0));
      },
      factor == 1.0 ? std::map<std::string, std::string>{{"RUNRUN_JOIN_AVERAGE", "contributors"}}
                    : std::map<std::string, std::string>{});
}

}  // namespace

TEST_CASE("with joined ranks an average divides by the set size (Horovod's default)",
          "[core][numerics][join]") {
  run_join_average(0.5);
}

TEST_CASE("RUNRUN_JOIN_AVERAGE=contributors divides by the ranks that contributed",
          "[core][numerics][join]") {
  run_join_average(1.0);
}

TEST_CASE("RUNRUN_JOIN_AVERAGE rejects values other than set_size and contributors",
          "[core][numerics][join][config]") {
  CHECK(Config::load({{"RUNRUN_JOIN_AVERAGE", "set_size"}}).join_average_by_contributors == false);
  CHECK(Config::load({{"RUNRUN_JOIN_AVERAGE", "contributors"}}).join_average_by_contributors);
  CHECK(Config::load().join_average_by_contributors == false);
  CHECK_THROWS_WITH(Config::load({{"RUNRUN_JOIN_AVERAGE", "ranks"}}),
                    Catch::Contains("RUNRUN_JOIN_AVERAGE") && Catch::Contains("contributors"));
}

TEST_CASE("int16 tensors go through every op", "[core][numerics][int16]") {
  run_ranks(3, [](int rank, Runtime& rt) {
    const int size = 3;
    // Values near the int16 range: sums of 3 still fit, products wrap like torch's.
    auto value = [](int r, size_t i) {
      return static_cast<int16_t>(10000 - 7000 * r + static_cast<int>(i));
    };
    for (ReduceOp op :
         {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct}) {
      std::vector<int16_t> x(5);
      for (size_t i = 0; i < x.size(); ++i) x[i] = value(rank, i);
      AllreduceOptions o;
      o.op = op;
      require_ok(
          *rt.allreduce("i16." + std::string(reduce_op_name(op)), view(x, {5}), view(x, {5}), o));
      for (size_t i = 0; i < x.size(); ++i) {
        int64_t sum = 0, mn = 1 << 20, mx = -(1 << 20);
        uint16_t product = 1;
        for (int r = 0; r < size; ++r) {
          sum += value(r, i);
          mn = std::min<int64_t>(mn, value(r, i));
          mx = std::max<int64_t>(mx, value(r, i));
          product = static_cast<uint16_t>(uint32_t{product} * static_cast<uint16_t>(value(r, i)));
        }
        int64_t want = sum;
        if (op == ReduceOp::kAverage) want = scaled(sum, 1.0 / size);
        if (op == ReduceOp::kMin) want = mn;
        if (op == ReduceOp::kMax) want = mx;
        if (op == ReduceOp::kProduct) want = static_cast<int16_t>(product);
        RANK_CHECK(x[i] == static_cast<int16_t>(want));
      }
    }
    // allgather with a different first dimension per rank
    std::vector<int16_t> mine(static_cast<size_t>(rank + 1) * 2, static_cast<int16_t>(-300 * rank));
    auto hg = rt.allgather({"i16.gather"}, {view(mine, {rank + 1, 2})}, 0);
    require_ok(*hg);
    std::vector<int16_t> gathered;
    for (int r = 0; r < size; ++r)
      gathered.insert(gathered.end(), static_cast<size_t>(r + 1) * 2,
                      static_cast<int16_t>(-300 * r));
    RANK_CHECK(copy_out<int16_t>(*hg, 0) == gathered);
    // broadcast from rank 2
    std::vector<int16_t> b(4, static_cast<int16_t>(rank == 2 ? -32768 : 1));
    require_ok(*rt.broadcast("i16.bcast", view(b, {4}), view(b, {4}), 2, 0));
    RANK_CHECK(b == std::vector<int16_t>(4, -32768));
    // alltoall, equal splits: rank r sends element p * 2 + j to rank p.
    std::vector<int16_t> a(6);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = static_cast<int16_t>(rank * 1000 + static_cast<int>(i));
    auto ha = rt.alltoall("i16.a2a", view(a, {6}), {}, 0);
    require_ok(*ha);
    std::vector<int16_t> want_a;
    for (int p = 0; p < size; ++p) {
      for (int j = 0; j < 2; ++j) want_a.push_back(static_cast<int16_t>(p * 1000 + rank * 2 + j));
    }
    RANK_CHECK(copy_out<int16_t>(*ha, 0) == want_a);
    // reducescatter (sum) and the grouped, scaled forms are covered by the scaling test.
    std::vector<int16_t> rs(6, static_cast<int16_t>(rank + 1));
    AllreduceOptions sum;
    sum.op = ReduceOp::kSum;
    auto hr = rt.reducescatter({"i16.rs"}, {view(rs, {3, 2})}, sum);
    require_ok(*hr);
    RANK_CHECK(copy_out<int16_t>(*hr, 0) == std::vector<int16_t>(2, 6));
  });
}
