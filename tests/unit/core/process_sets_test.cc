// Process sets, join and grouped ops, N ranks as threads.
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_error;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;
using runrun::testing::view_of;

namespace {

AllreduceOptions on_set(int32_t set, ReduceOp op = ReduceOp::kSum) {
  AllreduceOptions o;
  o.op = op;
  o.process_set = set;
  return o;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("process sets reduce over their members only and proceed independently", "[core][sets]") {
  run_ranks(4, [](int rank, Runtime& rt) {
    int32_t even = rt.add_process_set({0, 2});
    int32_t odd = rt.add_process_set({1, 3});
    RANK_CHECK(even != odd && even > 0 && odd > 0);
    RANK_CHECK((rt.process_set_ranks(even) == std::vector<int>{0, 2}));
    RANK_CHECK(rt.process_set_rank(even) == (rank % 2 == 0 ? rank / 2 : -1));
    int32_t mine = rank % 2 == 0 ? even : odd;
    // Odd ranks run several ops while even ranks run one: the sets do not wait for each other.
    int repeats = rank % 2 == 0 ? 1 : 5;
    for (int i = 0; i < repeats; ++i) {
      std::vector<float> x(6, static_cast<float>(rank + 1));
      require_ok(*rt.allreduce("x" + std::to_string(i), view_of(x), view_of(x), on_set(mine)));
      float expected = rank % 2 == 0 ? 1.0f + 3.0f : 2.0f + 4.0f;
      for (float v : x) RANK_CHECK(v == expected);
    }
    // Broadcast roots are global ranks.
    std::vector<float> b(3, static_cast<float>(rank));
    int root = rank % 2 == 0 ? 2 : 1;
    require_ok(*rt.broadcast("b", view_of(b), view_of(b), root, mine));
    for (float v : b) RANK_CHECK(v == static_cast<float>(root));
    require_ok(*rt.barrier(mine));

    // A rank outside a set gets a clear error.
    std::vector<float> y(2, 1.0f);
    int32_t other = rank % 2 == 0 ? odd : even;
    try {
      rt.allreduce("y", view_of(y), view_of(y), on_set(other));
      RANK_CHECK(false);
    } catch (const InvalidArgumentError& e) {
      RANK_CHECK(contains(e.what(), "is not a member of process set"));
    }
    try {
      rt.add_process_set({0, 2});
      RANK_CHECK(false);
    } catch (const InvalidArgumentError& e) {
      RANK_CHECK(contains(e.what(), "already exists"));
    }
    rt.remove_process_set(even);
    rt.remove_process_set(odd);
    try {
      rt.allreduce("z", view_of(y), view_of(y), on_set(mine));
      RANK_CHECK(false);
    } catch (const InvalidArgumentError& e) {
      RANK_CHECK(contains(e.what(), "does not exist"));
    }
    std::vector<float> g(2, 1.0f);
    require_ok(*rt.allreduce("global", view_of(g), view_of(g), on_set(0)));
    RANK_CHECK(g[0] == 4.0f);
  });
}

TEST_CASE("join: joined ranks contribute zeros and average divides by the set size",
          "[core][join]") {
  run_ranks(3, [](int rank, Runtime& rt) {
    // Rank 2 runs out of data at once; ranks 0 and 1 do two more steps.
    if (rank == 2) {
      auto joined = rt.join(0);
      require_ok(*joined);
      RANK_CHECK(joined->result() == 1);  // rank 1 joins last (see below)
      return;
    }
    for (int step = 0; step < 2; ++step) {
      std::vector<float> sum(4, static_cast<float>(rank + 1));
      require_ok(
          *rt.allreduce("sum" + std::to_string(step), view_of(sum), view_of(sum), on_set(0)));
      for (float v : sum) RANK_CHECK(v == 3.0f);
      std::vector<float> avg(4, static_cast<float>(rank + 1));
      require_ok(*rt.allreduce("avg" + std::to_string(step), view_of(avg), view_of(avg),
                               on_set(0, ReduceOp::kAverage)));
      for (float v : avg) RANK_CHECK(v == 1.0f);  // (1 + 2 + 0) / 3: rank 2 joined
    }
    // Other ops are refused while a rank is joined.
    std::vector<float> g(2, 1.0f);
    auto gather = rt.allgather({"g"}, {TensorView{g.data(), DataType::kFloat32, {2}}}, 0);
    std::string error = require_error(*gather, ErrorCode::kMismatch);
    RANK_CHECK(contains(error, "have joined"));
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto joined = rt.join(0);
    require_ok(*joined);
    RANK_CHECK(joined->result() == 1);
  });
}

TEST_CASE("grouped allreduce completes as one unit with exact results", "[core][group]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    for (int step = 0; step < 3; ++step) {  // the first step negotiates, later ones hit the cache
      std::vector<std::vector<float>> t(5, std::vector<float>(10, static_cast<float>(rank + 1)));
      std::vector<std::string> names;
      std::vector<TensorView> views;
      for (size_t i = 0; i < t.size(); ++i) {
        names.push_back("grp." + std::to_string(i));
        views.push_back(view_of(t[i]));
      }
      auto handle = rt.grouped_allreduce(names, views, views, on_set(0));
      require_ok(*handle);
      for (auto& v : t)
        for (float x : v) RANK_CHECK(x == 3.0f);
    }
  });
}
