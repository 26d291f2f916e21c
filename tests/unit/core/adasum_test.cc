// op=Adasum through the runtime (N ranks as threads over the local backend): a grouped
// allreduce is fused and each tensor gets its own coefficients, prescale and postscale apply
// around the combination, a joined rank contributes zeros, and the enqueue refuses what Adasum
// cannot combine, naming the tensor and what to change. Inputs are chosen so the results are
// exact (parallel vectors scaled by powers of two, vectors on disjoint elements).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;
using runrun::testing::view_of;

namespace {

AllreduceOptions adasum() {
  AllreduceOptions o;
  o.op = ReduceOp::kAdasum;
  return o;
}

float base(size_t i) { return static_cast<float>(static_cast<int>(i % 9) - 4); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("adasum: a grouped allreduce gives each tensor its own coefficients", "[core][adasum]") {
  run_ranks(4, [](int rank, Runtime& rt) {
    // Parallel: 1, 2, 4, 8 times v -> (1, 2) 1.5 v, (4, 8) 6 v -> (1.5, 6) 3.75 v.
    // Orthogonal (rank r holds the elements i % 4 == r): the sum, v.
    std::vector<float> parallel(37), orthogonal(23), out(37);
    for (size_t i = 0; i < parallel.size(); ++i) {
      parallel[i] = base(i) * static_cast<float>(1 << rank);
    }
    for (size_t i = 0; i < orthogonal.size(); ++i) {
      orthogonal[i] = static_cast<int>(i % 4) == rank ? base(i) : 0.0f;
    }
    AllreduceOptions o = adasum();
    o.prescale = 2.0;  // scales every input: the combination of 2x is 2x the combination
    o.postscale = 0.25;
    auto handle =
        rt.grouped_allreduce({"parallel", "orthogonal"}, {view_of(parallel), view_of(orthogonal)},
                             {view_of(out), view_of(orthogonal)}, o);
    require_ok(*handle);
    for (size_t i = 0; i < out.size(); ++i) RANK_CHECK(out[i] == base(i) * 3.75f * 0.5f);
    for (size_t i = 0; i < orthogonal.size(); ++i) RANK_CHECK(orthogonal[i] == base(i) * 0.5f);
    RANK_CHECK(parallel[1] == base(1) * static_cast<float>(1 << rank));  // out of place
  });
}

TEST_CASE("adasum: a joined rank contributes zeros", "[core][adasum][join]") {
  run_ranks(4, [](int rank, Runtime& rt) {
    // v, v, 2v and (rank 3 joined) 0 -> (v, v) v, (2v, 0) 2v -> (v, 2v) 1.5 v.
    std::vector<float> x(11);
    for (size_t i = 0; i < x.size(); ++i) x[i] = base(i) * (rank == 2 ? 2.0f : 1.0f);
    if (rank != 3) {
      require_ok(*rt.allreduce("x", view_of(x), view_of(x), adasum()));
      for (size_t i = 0; i < x.size(); ++i) RANK_CHECK(x[i] == base(i) * 1.5f);
    }
    require_ok(*rt.join(0));
  });
}

TEST_CASE("adasum: what it cannot combine is refused at enqueue, naming the tensor",
          "[core][adasum]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<int32_t> counts(4, 1);
    const TensorView ints{counts.data(), DataType::kInt32, {4}};
    try {
      rt.allreduce("counts", ints, ints, adasum());
      RANK_CHECK(false);
    } catch (const UnsupportedError& e) {
      RANK_CHECK(
          contains(e.what(), "allreduce of tensor 'counts' on rank " + std::to_string(rank)));
      RANK_CHECK(contains(e.what(), "combines floating-point tensors"));
      RANK_CHECK(contains(e.what(), "not int32; use sum or average"));
    }
    std::vector<float> x(4, 1.0f);
    AllreduceOptions scatter = adasum();
    try {
      rt.reducescatter({"scattered"}, {view_of(x)}, scatter);
      RANK_CHECK(false);
    } catch (const InvalidArgumentError& e) {
      RANK_CHECK(contains(e.what(), "op adasum is not supported; use sum or average"));
    }
  });
  run_ranks(3, [](int, Runtime& rt) {
    std::vector<float> x(4, 1.0f);
    try {
      rt.allreduce("x", view_of(x), view_of(x), adasum());
      RANK_CHECK(false);
    } catch (const UnsupportedError& e) {
      RANK_CHECK(contains(e.what(), "needs a power-of-two number of ranks"));
      RANK_CHECK(contains(e.what(), "the process set has 3"));
    }
  });
}

TEST_CASE(
    "adasum: tiny parallel gradients are averaged, as Horovod's (a squared norm counts as "
    "zero only below sqrt(DBL_MIN))",
    "[core][adasum]") {
  // Two equal vectors v: coefficients 1 - |v|^2 / (2 |v|^2) = 1/2 each, so the result is v.
  // Squared norms of about 1e-11, 1e-16 and 1e-73 (float64); a threshold of 1e-8 summed them.
  for (const double scale : {1e-6, 1e-8, 1e-37}) {
    run_ranks(2, [scale](int, Runtime& rt) {
      std::vector<double> v(7), out(7);
      for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<double>(i % 3 + 1);
      const auto view = [](std::vector<double>& x) {
        return TensorView{x.data(), DataType::kFloat64, {static_cast<int64_t>(x.size())}};
      };
      require_ok(*rt.allreduce("tiny", view(v), view(out), adasum()));
      for (size_t i = 0; i < v.size(); ++i) RANK_CHECK(out[i] == v[i]);
    });
  }
}
