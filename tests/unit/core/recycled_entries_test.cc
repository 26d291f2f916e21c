// Entries are recycled (core/runtime/entry_pool.h): an op enqueued under a name that an earlier op
// used
// gets that op's entry back, emptied. Nothing of the earlier op may reach the new one: a group
// tag would make a single op wait for a group forever, a longer shape or another dtype would
// reduce the wrong bytes. Checked through real ranks, with exact results.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;

namespace {

template <typename T>
TensorView view(std::vector<T>& values, DataType dtype, std::vector<int64_t> shape) {
  return TensorView{values.data(), dtype, std::move(shape), kCpuDevice};
}

}  // namespace

TEST_CASE("an op on a recycled entry carries nothing of the op before it", "[core][entry_pool]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    const std::vector<std::string> names = {"recycled.a", "recycled.b", "recycled.c"};
    for (int step = 0; step < 3; ++step) {
      // A group of three int64 [2, 3] max reductions...
      std::vector<std::vector<int64_t>> group(3, std::vector<int64_t>(6));
      std::vector<TensorView> views;
      for (size_t t = 0; t < group.size(); ++t) {
        for (size_t i = 0; i < 6; ++i) group[t][i] = rank == 0 ? int64_t(i) : int64_t(10 - i);
        views.push_back(view(group[t], DataType::kInt64, {2, 3}));
      }
      AllreduceOptions max;
      max.op = ReduceOp::kMax;
      require_ok(*rt.grouped_allreduce(names, views, views, max));
      for (const auto& tensor : group) {
        for (size_t i = 0; i < 6; ++i) {
          RANK_CHECK_EQ(tensor[i], std::max(int64_t(i), int64_t(10 - i)));
        }
      }
      // ... then each name alone, as float64 of another rank and shape, summed with a scale:
      // no group tag, no old shape or dtype, no old op or factors.
      for (size_t t = 0; t < names.size(); ++t) {
        std::vector<double> single(5 + t, rank + 1.0);
        AllreduceOptions sum;
        sum.op = ReduceOp::kSum;
        sum.postscale = 0.5;
        require_ok(*rt.allreduce(names[t], view(single, DataType::kFloat64, {int64_t(5 + t)}),
                                 view(single, DataType::kFloat64, {int64_t(5 + t)}), sum));
        for (double v : single) RANK_CHECK_EQ(v, 1.5);  // (1 + 2) * 0.5
      }
      // ... and a longer shape under a name of the group, in place, average (the default).
      std::vector<float> longer(24, rank == 0 ? 1.0F : 3.0F);
      require_ok(*rt.allreduce(names[0], view(longer, DataType::kFloat32, {2, 3, 4}),
                               view(longer, DataType::kFloat32, {2, 3, 4}), AllreduceOptions{}));
      for (float v : longer) RANK_CHECK_EQ(v, 2.0F);
    }
  });
}
