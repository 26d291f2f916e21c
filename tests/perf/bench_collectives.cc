#include "tests/perf/bench_collectives.h"

#include <algorithm>
#include <vector>

#include "common/errors.h"
#include "ops/adasum/adasum_allreduce.h"

namespace runrun::perf {
namespace {

constexpr size_t kFloat = sizeof(float);

std::vector<size_t> default_sizes(const std::string& op) {
  const bool reduce = op == "allreduce" || op == "adasum";
  const size_t first = reduce ? 4 : 1024;
  const size_t last = reduce ? size_t{256} << 20 : size_t{64} << 20;
  std::vector<size_t> sizes;
  for (size_t b = first; b <= last; b *= 4) sizes.push_back(b);
  return sizes;
}

TensorView view_of(std::vector<float>& buffer) {
  return TensorView{buffer.data(), DataType::kFloat32, {static_cast<int64_t>(buffer.size())}};
}

void report(BenchContext& ctx, const std::string& op, size_t bytes, const std::vector<Summary>& s) {
  ctx.reporter.row(
      Row{op, bytes, 1, bus_factor_for(op, ctx.size), s[0], s[1], std::nullopt, std::nullopt});
}

void bench_allreduce(BenchContext& ctx, size_t bytes) {
  const size_t count = std::max<size_t>(1, bytes / kFloat);
  const std::string name = "bench.allreduce." + std::to_string(count);
  std::vector<float> buffer(count);
  const TensorView view = view_of(buffer);
  AllreduceOptions options;
  options.op = ReduceOp::kSum;
  const Side runtime = [&] { wait_ok(ctx.runtime.allreduce(name, view, view, options), name); };
  const Side raw = [&] { ctx.raw.allreduce_sum(buffer.data(), count); };
  const float sum = static_cast<float>(ctx.size * (ctx.size + 1) / 2);
  for (const Side* side : {&runtime, &raw}) {
    std::fill(buffer.begin(), buffer.end(), static_cast<float>(ctx.rank + 1));
    (*side)();
    expect_all(buffer.data(), count, sum, name, ctx.rank);
  }
  std::fill(buffer.begin(), buffer.end(), 0.0f);  // timed sums of zeros never overflow
  report(ctx, "allreduce", count * kFloat, time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

// Horovod's op=Adasum through the runtime against the raw backend's plain sum of the same bytes:
// what the adaptive combination costs over the allreduce it replaces (the raw backends have no
// Adasum of their own). Only over a power-of-two number of ranks.
void bench_adasum(BenchContext& ctx, size_t bytes) {
  if (!adasum_supports_size(ctx.size)) return;
  const size_t count = std::max<size_t>(1, bytes / kFloat);
  const std::string name = "bench.adasum." + std::to_string(count);
  std::vector<float> buffer(count);
  const TensorView view = view_of(buffer);
  AllreduceOptions options;
  options.op = ReduceOp::kAdasum;
  const Side runtime = [&] { wait_ok(ctx.runtime.allreduce(name, view, view, options), name); };
  const Side raw = [&] { ctx.raw.allreduce_sum(buffer.data(), count); };
  std::fill(buffer.begin(), buffer.end(), 3.0f);
  runtime();
  expect_all(buffer.data(), count, 3.0f, name, ctx.rank);  // Adasum of equal inputs: the input
  std::fill(buffer.begin(), buffer.end(), 0.0f);           // zeros: every timed run the same work
  report(ctx, "allreduce.adasum", count * kFloat,
         time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

void bench_broadcast(BenchContext& ctx, size_t bytes) {
  const size_t count = std::max<size_t>(1, bytes / kFloat);
  const std::string name = "bench.broadcast." + std::to_string(count);
  std::vector<float> buffer(count);
  const TensorView view = view_of(buffer);
  const Side runtime = [&] { wait_ok(ctx.runtime.broadcast(name, view, view, 0, 0), name); };
  const Side raw = [&] { ctx.raw.broadcast(buffer.data(), count, 0); };
  for (const Side* side : {&runtime, &raw}) {
    std::fill(buffer.begin(), buffer.end(), ctx.rank == 0 ? 7.0f : 0.0f);
    (*side)();
    expect_all(buffer.data(), count, 7.0f, name, ctx.rank);
  }
  report(ctx, "broadcast", count * kFloat, time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

// bytes: the whole gathered output (nccl-tests convention).
void bench_allgather(BenchContext& ctx, size_t bytes) {
  const size_t per_rank = std::max<size_t>(1, bytes / kFloat / static_cast<size_t>(ctx.size));
  const std::string name = "bench.allgather." + std::to_string(per_rank);
  std::vector<float> input(per_rank, static_cast<float>(ctx.rank + 1));
  std::vector<float> output(per_rank * static_cast<size_t>(ctx.size));
  const TensorView view = view_of(input);
  std::optional<OwnedTensor> gathered;
  const Side runtime = [&] {
    auto handle = ctx.runtime.allgather({name}, {view}, 0);
    wait_ok(handle, name);
    gathered = handle->take_output(0);  // the runtime allocated it; dropped on the next call
  };
  const Side raw = [&] { ctx.raw.allgather(input.data(), output.data(), per_rank); };
  runtime();
  raw();
  RUNRUN_ENFORCE(gathered && gathered->num_bytes() == output.size() * kFloat, InternalError,
                 name + ": the runtime returned no output or one of the wrong size");
  for (int r = 0; r < ctx.size; ++r) {
    const size_t at = static_cast<size_t>(r) * per_rank;
    const auto* got = reinterpret_cast<const float*>(gathered->storage.get()) + at;
    expect_all(got, per_rank, static_cast<float>(r + 1), name + " (runtime)", ctx.rank);
    expect_all(output.data() + at, per_rank, static_cast<float>(r + 1), name + " (raw)", ctx.rank);
  }
  report(ctx, "allgather", output.size() * kFloat,
         time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

// bytes: the whole input (nccl-tests convention); each rank receives 1/n of it.
void bench_reducescatter(BenchContext& ctx, size_t bytes) {
  const size_t per_rank = std::max<size_t>(1, bytes / kFloat / static_cast<size_t>(ctx.size));
  const std::string name = "bench.reducescatter." + std::to_string(per_rank);
  std::vector<float> input(per_rank * static_cast<size_t>(ctx.size),
                           static_cast<float>(ctx.rank + 1));
  std::vector<float> output(per_rank);
  const TensorView view = view_of(input);
  AllreduceOptions options;
  options.op = ReduceOp::kSum;
  std::optional<OwnedTensor> mine;
  const Side runtime = [&] {
    auto handle = ctx.runtime.reducescatter({name}, {view}, options);
    wait_ok(handle, name);
    mine = handle->take_output(0);
  };
  const Side raw = [&] { ctx.raw.reducescatter_sum(input.data(), output.data(), per_rank); };
  runtime();
  raw();
  RUNRUN_ENFORCE(mine && mine->num_bytes() == per_rank * kFloat, InternalError,
                 name + ": the runtime returned no output or one of the wrong size");
  const float sum = static_cast<float>(ctx.size * (ctx.size + 1) / 2);
  expect_all(reinterpret_cast<const float*>(mine->storage.get()), per_rank, sum,
             name + " (runtime)", ctx.rank);
  expect_all(output.data(), per_rank, sum, name + " (raw)", ctx.rank);
  report(ctx, "reducescatter", input.size() * kFloat,
         time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

// bytes: what each rank sends in total; block p goes to rank p and holds rank * size + p.
void bench_alltoall(BenchContext& ctx, size_t bytes) {
  const auto ranks = static_cast<size_t>(ctx.size);
  const size_t block = std::max<size_t>(1, bytes / kFloat / ranks);
  const std::string name = "bench.alltoall." + std::to_string(block);
  std::vector<float> input(block * ranks), output(block * ranks);
  for (size_t p = 0; p < ranks; ++p) {
    std::fill_n(input.begin() + static_cast<std::ptrdiff_t>(p * block), block,
                static_cast<float>(static_cast<size_t>(ctx.rank) * ranks + p));
  }
  const TensorView view = view_of(input);
  std::optional<OwnedTensor> received;
  const Side runtime = [&] {
    auto handle = ctx.runtime.alltoall(name, view, {}, 0);
    wait_ok(handle, name);
    received = handle->take_output(0);
  };
  const Side raw = [&] { ctx.raw.alltoall(input.data(), output.data(), block); };
  runtime();
  raw();
  RUNRUN_ENFORCE(received && received->num_bytes() == output.size() * kFloat, InternalError,
                 name + ": the runtime returned no output or one of the wrong size");
  for (size_t q = 0; q < ranks; ++q) {
    const float want = static_cast<float>(q * ranks + static_cast<size_t>(ctx.rank));
    const auto* got = reinterpret_cast<const float*>(received->storage.get()) + q * block;
    expect_all(got, block, want, name + " (runtime)", ctx.rank);
    expect_all(output.data() + q * block, block, want, name + " (raw)", ctx.rank);
  }
  report(ctx, "alltoall", input.size() * kFloat,
         time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

}  // namespace

void run_collective_case(BenchContext& ctx, const std::string& op) {
  using Bench = void (*)(BenchContext&, size_t);
  Bench bench = nullptr;
  if (op == "allreduce") bench = bench_allreduce;
  if (op == "adasum") bench = bench_adasum;
  if (op == "broadcast") bench = bench_broadcast;
  if (op == "allgather") bench = bench_allgather;
  if (op == "reducescatter") bench = bench_reducescatter;
  if (op == "alltoall") bench = bench_alltoall;
  RUNRUN_ENFORCE(bench != nullptr, InvalidArgumentError,
                 "no single-tensor case named '" + op + "'");
  const std::vector<size_t> sizes =
      ctx.options.sizes.empty() ? default_sizes(op) : ctx.options.sizes;
  for (size_t bytes : sizes) bench(ctx, bytes);
}

}  // namespace runrun::perf
