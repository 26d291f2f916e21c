#include "tests/perf/bench_gpu.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/errors.h"
#include "ops/cuda/cuda_runtime_library.h"
#include "ops/cuda_streams.h"
#include "ops/nccl/nccl_library.h"

namespace runrun::perf {
namespace {

constexpr size_t kFloat = sizeof(float);

// What both sides share: the device, a stream of the "framework" (the runtime's framework
// stream and the raw calls' stream) and the raw communicator.
struct Gpu {
  int device = 0;
  gpu::cuda_abi::Stream stream = nullptr;
  gpu::nccl_abi::Comm comm = nullptr;
};

void check_nccl(gpu::nccl_abi::Result result, const char* call) {
  RUNRUN_ENFORCE(result == gpu::nccl_abi::kSuccess, InternalError,
                 std::string("raw ") + call + ": " + gpu::nccl_library().error_text(result));
}

Gpu& gpu_of(BenchContext& ctx) {
  static Gpu g = [&] {
    Gpu made;
    const gpu::CudaRuntimeLibrary& cuda = gpu::cuda_runtime();
    int devices = 0;
    gpu::check_cuda(cuda.get_device_count(&devices), "cudaGetDeviceCount", 0);
    RUNRUN_ENFORCE(devices > 0, UnsupportedError, "runrun_bench: no CUDA device for cuda_* cases");
    made.device = ctx.rank % devices;
    gpu::check_cuda(cuda.set_device(made.device), "cudaSetDevice", made.device);
    gpu::check_cuda(cuda.stream_create_with_flags(&made.stream, gpu::cuda_abi::kStreamNonBlocking),
                    "cudaStreamCreateWithFlags", made.device);
    gpu::set_framework_stream(made.stream);
    const gpu::NcclLibrary& nccl = gpu::nccl_library();
    gpu::nccl_abi::UniqueId id{};
    if (ctx.rank == 0) check_nccl(nccl.get_unique_id(&id), "ncclGetUniqueId");
    static_assert(sizeof(id) % kFloat == 0);
    std::vector<float> words(sizeof(id) / kFloat);
    std::memcpy(words.data(), &id, sizeof(id));
    ctx.raw.broadcast(words.data(), words.size(), 0);  // over the raw CPU side (MPI/Gloo)
    std::memcpy(&id, words.data(), sizeof(id));
    check_nccl(nccl.comm_init_rank(&made.comm, ctx.size, id, ctx.rank), "ncclCommInitRank");
    return made;
  }();
  return g;
}

// Device memory of `count` floats, freed with the object.
struct DeviceFloats {
  float* data = nullptr;
  size_t count;
  explicit DeviceFloats(size_t n) : count(n) {
    void* p = nullptr;
    gpu::check_cuda(gpu::cuda_runtime().malloc_device(&p, std::max<size_t>(n, 1) * kFloat),
                    "cudaMalloc", 0);
    data = static_cast<float*>(p);
  }
  ~DeviceFloats() { gpu::cuda_runtime().free_device(data); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
};

// Blocks until the work enqueued on the stream so far ran (only that stream's).
void sync(const Gpu& g) {
  gpu::CudaEvent done(g.device);
  done.record(g.stream);
  done.synchronize();
}

void fill(const Gpu& g, float* device, size_t count, float value) {
  std::vector<float> host(count, value);
  gpu::copy_async(device, host.data(), count * kFloat, g.stream, g.device);
  sync(g);
}

std::vector<float> read(const Gpu& g, const float* device, size_t count) {
  std::vector<float> host(count);
  gpu::copy_async(host.data(), device, count * kFloat, g.stream, g.device);
  sync(g);
  return host;
}

TensorView cuda_view(const Gpu& g, float* data, size_t count) {
  return TensorView{data, DataType::kFloat32, {static_cast<int64_t>(count)}, {kDLCUDA, g.device}};
}

void report(BenchContext& ctx, const std::string& op, size_t bytes, const std::vector<Summary>& s) {
  ctx.reporter.row(Row{op + ".cuda", bytes, 1, bus_factor_for(op, ctx.size), s[0], s[1],
                       std::nullopt, std::nullopt});
}

void bench_allreduce(BenchContext& ctx, Gpu& g, size_t bytes) {
  const size_t count = std::max<size_t>(1, bytes / kFloat);
  const std::string name = "bench.cuda.allreduce." + std::to_string(count);
  DeviceFloats buffer(count);
  const TensorView view = cuda_view(g, buffer.data, count);
  AllreduceOptions options;
  options.op = ReduceOp::kSum;
  const Side runtime = [&] { wait_ok(ctx.runtime.allreduce(name, view, view, options), name); };
  const Side raw = [&] {
    check_nccl(
        gpu::nccl_library().all_reduce(buffer.data, buffer.data, count, gpu::nccl_abi::kFloat32,
                                       gpu::nccl_abi::kSum, g.comm, g.stream),
        "ncclAllReduce");
    sync(g);
  };
  const float sum = static_cast<float>(ctx.size * (ctx.size + 1) / 2);
  for (const Side* side : {&runtime, &raw}) {
    fill(g, buffer.data, count, static_cast<float>(ctx.rank + 1));
    (*side)();
    expect_all(read(g, buffer.data, count).data(), count, sum, name, ctx.rank);
  }
  fill(g, buffer.data, count, 0.0f);
  report(ctx, "allreduce", count * kFloat, time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

void bench_broadcast(BenchContext& ctx, Gpu& g, size_t bytes) {
  const size_t count = std::max<size_t>(1, bytes / kFloat);
  const std::string name = "bench.cuda.broadcast." + std::to_string(count);
  DeviceFloats buffer(count);
  const TensorView view = cuda_view(g, buffer.data, count);
  const Side runtime = [&] { wait_ok(ctx.runtime.broadcast(name, view, view, 0, 0), name); };
  const Side raw = [&] {
    check_nccl(gpu::nccl_library().broadcast(buffer.data, buffer.data, count,
                                             gpu::nccl_abi::kFloat32, 0, g.comm, g.stream),
               "ncclBroadcast");
    sync(g);
  };
  for (const Side* side : {&runtime, &raw}) {
    fill(g, buffer.data, count, ctx.rank == 0 ? 7.0f : 0.0f);
    (*side)();
    expect_all(read(g, buffer.data, count).data(), count, 7.0f, name, ctx.rank);
  }
  report(ctx, "broadcast", count * kFloat, time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

// bytes: the whole gathered output (nccl-tests convention).
void bench_allgather(BenchContext& ctx, Gpu& g, size_t bytes) {
  const size_t per_rank = std::max<size_t>(1, bytes / kFloat / static_cast<size_t>(ctx.size));
  const size_t total = per_rank * static_cast<size_t>(ctx.size);
  const std::string name = "bench.cuda.allgather." + std::to_string(per_rank);
  DeviceFloats input(per_rank), output(total);
  fill(g, input.data, per_rank, static_cast<float>(ctx.rank + 1));
  const TensorView view = cuda_view(g, input.data, per_rank);
  std::optional<OwnedTensor> gathered;
  const Side runtime = [&] {
    auto handle = ctx.runtime.allgather({name}, {view}, 0);
    wait_ok(handle, name);
    gathered = handle->take_output(0);  // on the device; freed on the stream when replaced
  };
  const Side raw = [&] {
    check_nccl(gpu::nccl_library().all_gather(input.data, output.data, per_rank,
                                              gpu::nccl_abi::kFloat32, g.comm, g.stream),
               "ncclAllGather");
    sync(g);
  };
  runtime();
  raw();
  RUNRUN_ENFORCE(gathered && gathered->num_bytes() == total * kFloat &&
                     gathered->device.device_type == kDLCUDA,
                 InternalError,
                 name +
                     ": the runtime's output is missing, not on the device or "
                     "of the wrong size");
  const auto got = read(g, reinterpret_cast<const float*>(gathered->storage.get()), total);
  const auto want = read(g, output.data, total);
  for (int r = 0; r < ctx.size; ++r) {
    const size_t at = static_cast<size_t>(r) * per_rank;
    expect_all(got.data() + at, per_rank, static_cast<float>(r + 1), name + " (runtime)", ctx.rank);
    expect_all(want.data() + at, per_rank, static_cast<float>(r + 1), name + " (raw)", ctx.rank);
  }
  report(ctx, "allgather", total * kFloat, time_sides(ctx.plan(bytes), ctx.raw, {runtime, raw}));
}

}  // namespace

void run_gpu_case(BenchContext& ctx, const std::string& name) {
  Gpu& g = gpu_of(ctx);
  using Bench = void (*)(BenchContext&, Gpu&, size_t);
  Bench bench = nullptr;
  if (name == "cuda_allreduce") bench = bench_allreduce;
  if (name == "cuda_broadcast") bench = bench_broadcast;
  if (name == "cuda_allgather") bench = bench_allgather;
  RUNRUN_ENFORCE(bench != nullptr, InvalidArgumentError, "no GPU case named '" + name + "'");
  std::vector<size_t> sizes = ctx.options.sizes;
  if (sizes.empty()) {
    for (size_t b = size_t{1} << 10; b <= size_t{1} << 30; b *= 4) sizes.push_back(b);
  }
  for (size_t bytes : sizes) bench(ctx, g, bytes);
}

}  // namespace runrun::perf
