// Regressions found in review: fused allreduces with and without joined ranks, groups whose
// members take different negotiation paths on different ranks, groups that cannot complete.
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

AllreduceOptions average() {
  AllreduceOptions o;
  o.op = ReduceOp::kAverage;
  return o;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("allreduces with and without joined ranks in one round divide correctly",
          "[core][join]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    using namespace std::chrono_literals;
    std::vector<float> x(4, 1.0f), a(4, rank == 0 ? 1.0f : 3.0f), b(4, 10.0f);
    if (rank == 1) {
      auto hx = rt.allreduce("x", view_of(x), view_of(x), average());
      std::this_thread::sleep_for(100ms);  // the worker waits in a round with x
      auto ha = rt.allreduce("a", view_of(a), view_of(a), average());
      auto hj = rt.join(0);
      require_ok(*hx);
      require_ok(*ha);
      require_ok(*hj);
      RANK_CHECK(a[0] == 2.0f);
    } else {
      std::this_thread::sleep_for(300ms);
      auto hx = rt.allreduce("x", view_of(x), view_of(x), average());
      auto ha = rt.allreduce("a", view_of(a), view_of(a), average());
      auto hb = rt.allreduce("b", view_of(b), view_of(b), average());  // rank 1 joined: b / 2
      require_ok(*hx);
      require_ok(*ha);
      require_ok(*hb);
      require_ok(*rt.join(0));
      RANK_CHECK(a[0] == 2.0f);
      RANK_CHECK(b[0] == 5.0f);  // the joined rank's zeros count (RUNRUN_JOIN_AVERAGE)
    }
  });
}

TEST_CASE("a grouped op whose member goes stale on one rank only still runs", "[core][group]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    for (int step = 0; step < 3; ++step) {
      std::vector<float> m(2, static_cast<float>(rank));
      int64_t rows = (step >= 1 && rank == 1) ? 3 : 2;  // rank 1's batch changes size
      std::vector<float> p(static_cast<size_t>(rows), 2.0f);
      auto h = rt.allgather({"m", "p"},
                            {TensorView{m.data(), DataType::kFloat32, {2}},
                             TensorView{p.data(), DataType::kFloat32, {rows}}},
                            0);
      require_ok(*h);
      auto gm = h->take_output(0);
      auto gp = h->take_output(1);
      RANK_CHECK(gm && gm->shape[0] == 4);
      RANK_CHECK(gp && gp->shape[0] == (step >= 1 ? 5 : 4));
    }
  });
}

TEST_CASE("ranks that disagree about a group fail it on every rank instead of waiting",
          "[core][group]") {
  for (int grouped_rank : {0, 1}) {
    run_ranks(2, [grouped_rank](int rank, Runtime& rt) {
      std::vector<float> a(2, 1.0f), b(2, 1.0f);
      std::shared_ptr<Handle> h;
      if (rank == grouped_rank) {
        h = rt.grouped_allreduce({"A", "B"}, {view_of(a), view_of(b)}, {view_of(a), view_of(b)},
                                 {});
      } else {
        h = rt.allreduce("A", view_of(a), view_of(a), {});
      }
      std::string error = require_error(*h, ErrorCode::kMismatch);
      RANK_CHECK(contains(error, "mismatched group"));
      // Both ranks go on: the failed group left nothing behind.
      std::vector<float> c(2, 1.0f);
      AllreduceOptions sum;
      sum.op = ReduceOp::kSum;
      require_ok(*rt.allreduce("after", view_of(c), view_of(c), sum));
      RANK_CHECK(c[0] == 2.0f);
    });
  }
}
