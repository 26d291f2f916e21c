#include "tests/perf/bench_many.h"

#include <numeric>
#include <vector>

#include "tests/perf/resnet50_params.h"

namespace runrun::perf {
namespace {

// The gradients of one step: one arena, one slice per tensor (like a model's flat storage).
struct TensorSet {
  std::vector<float> arena;
  std::vector<size_t> offsets;
  std::vector<TensorView> views;
  std::vector<std::string> names;

  TensorSet(const std::string& prefix, const std::vector<size_t>& counts) {
    size_t total = 0;
    for (size_t c : counts) {
      offsets.push_back(total);
      total += c;
    }
    arena.resize(total);
    for (size_t i = 0; i < counts.size(); ++i) {
      views.push_back(TensorView{
          arena.data() + offsets[i], DataType::kFloat32, {static_cast<int64_t>(counts[i])}});
      names.push_back(prefix + "." + std::to_string(i));
    }
  }
  size_t bytes() const { return arena.size() * sizeof(float); }

  // Tensor i holds (i % 7) + rank + 1, so a misplaced fusion offset shows as a wrong value.
  void fill(int rank) {
    for (size_t i = 0; i < views.size(); ++i) {
      std::fill_n(arena.begin() + static_cast<std::ptrdiff_t>(offsets[i]), views[i].num_elements(),
                  static_cast<float>(i % 7 + 1 + static_cast<size_t>(rank)));
    }
  }
  void expect_sums(int rank, int size, const std::string& what) const {
    for (size_t i = 0; i < views.size(); ++i) {
      const float want =
          static_cast<float>(size * static_cast<int>(i % 7 + 1) + size * (size - 1) / 2);
      expect_all(arena.data() + offsets[i], views[i].num_elements(), want,
                 what + " tensor '" + names[i] + "'", rank);
    }
  }
};

AllreduceOptions sum_options() {
  AllreduceOptions options;
  options.op = ReduceOp::kSum;
  return options;
}

struct ManySides {
  Side runtime, grouped, raw, one_call;
};

// Counts the runtime's fused collectives per step of a side: how many buckets (one per
// negotiation round at least) the step's tensors were split into.
struct FusionCounter {
  const ProcessSetWorker* worker = nullptr;
  size_t steps = 0;
  size_t fused = 0;

  Side wrap(Side side) {
    return [this, side] {
      const size_t before = worker->fused_collectives();
      side();
      fused += worker->fused_collectives() - before;
      ++steps;
    };
  }
  double per_step() const {
    return steps ? static_cast<double>(fused) / static_cast<double>(steps) : 0;
  }
};

// `order`: the order tensors are enqueued and raw-reduced in.
ManySides make_sides(BenchContext& ctx, TensorSet& set, const std::vector<size_t>& order) {
  ManySides s;
  s.runtime = [&ctx, &set, order] {
    std::vector<std::shared_ptr<Handle>> handles;
    handles.reserve(order.size());
    for (size_t i : order) {
      handles.push_back(
          ctx.runtime.allreduce(set.names[i], set.views[i], set.views[i], sum_options()));
    }
    for (size_t k = 0; k < handles.size(); ++k) wait_ok(handles[k], set.names[order[k]]);
  };
  s.grouped = [&ctx, &set, order] {
    std::vector<std::string> names;
    std::vector<TensorView> views;
    for (size_t i : order) {
      names.push_back(set.names[i] + ".grouped");
      views.push_back(set.views[i]);
    }
    wait_ok(ctx.runtime.grouped_allreduce(names, views, views, sum_options()), "grouped allreduce");
  };
  s.raw = [&ctx, &set, order] {
    for (size_t i : order) {
      ctx.raw.allreduce_sum(static_cast<float*>(set.views[i].data),
                            static_cast<size_t>(set.views[i].num_elements()));
    }
  };
  s.one_call = [&ctx, &set] { ctx.raw.allreduce_sum(set.arena.data(), set.arena.size()); };
  return s;
}

void verify(BenchContext& ctx, TensorSet& set, const std::vector<const Side*>& sides,
            const std::string& what) {
  for (const Side* side : sides) {
    set.fill(ctx.rank);
    (*side)();
    set.expect_sums(ctx.rank, ctx.size, what);
  }
  std::fill(set.arena.begin(), set.arena.end(), 0.0f);
}

Row make_row(BenchContext& ctx, const std::string& op, const TensorSet& set, Summary runtime,
             Summary raw, Summary one_call, const FusionCounter& fused) {
  return Row{op,      set.bytes(), set.views.size(), bus_factor_for(op, ctx.size),
             runtime, raw,         one_call,         fused.per_step()};
}

}  // namespace

void run_many_small(BenchContext& ctx) {
  const size_t count = std::max<size_t>(1, ctx.options.many_bytes / sizeof(float));
  TensorSet set("bench.many", std::vector<size_t>(ctx.options.many_count, count));
  std::vector<size_t> order(set.views.size());
  std::iota(order.begin(), order.end(), 0);
  ManySides s = make_sides(ctx, set, order);
  verify(ctx, set, {&s.runtime, &s.grouped, &s.raw, &s.one_call}, "allreduce.many");
  TimingPlan plan = ctx.plan(set.bytes());
  plan.batch = 1;  // one block = one step
  FusionCounter single{&ctx.runtime.worker(0)};
  FusionCounter grouped{&ctx.runtime.worker(0)};
  std::vector<Summary> t = time_sides(
      plan, ctx.raw, {single.wrap(s.runtime), grouped.wrap(s.grouped), s.raw, s.one_call});
  ctx.reporter.row(make_row(ctx, "allreduce.many", set, t[0], t[2], t[3], single));
  ctx.reporter.row(make_row(ctx, "allreduce.many_grouped", set, t[1], t[2], t[3], grouped));
}

void run_resnet50(BenchContext& ctx) {
  std::vector<size_t> counts;
  for (const ParamTensor& p : resnet50_parameters()) counts.push_back(p.elements);
  TensorSet set("bench.resnet50", counts);
  std::vector<size_t> order(set.views.size());
  std::iota(order.rbegin(), order.rend(), 0);  // backward: last layer's gradients first
  ManySides s = make_sides(ctx, set, order);
  verify(ctx, set, {&s.runtime, &s.raw}, "allreduce.resnet50");
  TimingPlan plan = ctx.plan(set.bytes());
  plan.batch = 1;
  FusionCounter fused{&ctx.runtime.worker(0)};
  std::vector<Summary> t = time_sides(plan, ctx.raw, {fused.wrap(s.runtime), s.raw, s.one_call});
  ctx.reporter.row(make_row(ctx, "allreduce.resnet50", set, t[0], t[1], t[2], fused));
}

}  // namespace runrun::perf
