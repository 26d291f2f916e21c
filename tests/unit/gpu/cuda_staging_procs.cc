// CUDA tensors through the C API in real processes (issue 11, point 4): each rank is a process
// started by mpiexec or `runrun --gloo`, runs every op on kDLCUDA DLPack tensors of the fake CUDA
// runtime (fake_cuda_runtime.cc, through RUNRUN_CUDART_LIBRARY, with FAKE_CUDA_DELAY_US making
// stream work late), staged over the process backend named by argv[1], and checks each result
// exactly, read back on its framework stream. Exits 0 when every check passed.

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fake_cuda.h"
#include "runrun/c_api.h"

namespace {

int failures = 0;

void expect(bool ok, int rank, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: wrong result: %s\n", rank, what.c_str());
  ++failures;
}

bool ok(runrun_status status, const char* what) {
  if (status == RUNRUN_OK) return true;
  std::fprintf(stderr, "%s failed (%d): %s\n", what, static_cast<int>(status), runrun_last_error());
  ++failures;
  return false;
}

bool wait(runrun_handle* h, const char* what) {
  const runrun_status status = runrun_handle_wait(h, 120.0);
  if (status != RUNRUN_OK) {
    std::fprintf(stderr, "%s failed (%d): %s\n", what, static_cast<int>(status),
                 runrun_handle_error(h));
    ++failures;
    return false;
  }
  return true;
}

// A float32 CUDA tensor written on `stream`.
struct CudaTensor {
  runrun::testing::DeviceBytes bytes;
  std::vector<float> host;
  std::vector<int64_t> shape;
  DLTensor dl{};
  CudaTensor(std::vector<float> values, std::vector<int64_t> dims, int device, CUstream_st* stream)
      : bytes(values.size() * sizeof(float)), host(std::move(values)), shape(std::move(dims)) {
    std::vector<std::byte> raw(host.size() * sizeof(float));
    std::memcpy(raw.data(), host.data(), raw.size());
    bytes.write_async(raw, stream);
    cudaStreamSynchronize(stream);  // `raw` goes out of scope
    dl.data = bytes.data();
    dl.device = {kDLCUDA, device};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
  }
};

std::vector<float> read(const DLTensor& t, size_t count, CUstream_st* stream) {
  auto raw = runrun::testing::DeviceBytes::read(t.data, count * sizeof(float), stream);
  std::vector<float> values(count);
  std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  runrun_runtime* rt = nullptr;
  if (!ok(runrun_init(argc > 1 ? argv[1] : nullptr, &rt), "runrun_init")) return 2;
  runrun_topology topo{};
  runrun_get_topology(rt, &topo);
  const int rank = topo.rank, size = topo.size, device = topo.local_rank;
  CUstream_st* stream = runrun::testing::new_framework_stream();
  runrun_set_cuda_stream(stream);
  runrun_handle* h = nullptr;

  {  // allreduce, average, in place: mean of rank + i is i + (size - 1) / 2
    CudaTensor t({0.f + rank, 1.f + rank, 2.f + rank}, {3}, device, stream);
    runrun_allreduce_options o = runrun_allreduce_default_options();
    if (ok(runrun_allreduce(rt, "avg", &t.dl, &t.dl, &o, &h), "allreduce") && wait(h, "avg")) {
      const float half = (size - 1) / 2.0f;
      expect(read(t.dl, 3, stream) == std::vector<float>{half, 1 + half, 2 + half}, rank,
             "allreduce average");
    }
    runrun_handle_release(h);
  }
  {  // allgather, uneven: rank r has r + 1 rows of one element, all equal to r
    CudaTensor t(std::vector<float>(static_cast<size_t>(rank) + 1, float(rank)), {rank + 1}, device,
                 stream);
    DLManagedTensor* out = nullptr;
    if (ok(runrun_allgather(rt, "gather", &t.dl, 0, &h), "allgather") && wait(h, "gather") &&
        ok(runrun_handle_take_output(h, &out), "take_output")) {
      std::vector<float> expected;
      for (int r = 0; r < size; ++r) expected.insert(expected.end(), r + 1, float(r));
      expect(
          out->dl_tensor.device.device_type == kDLCUDA && out->dl_tensor.device.device_id == device,
          rank, "allgather output device");
      expect(read(out->dl_tensor, expected.size(), stream) == expected, rank, "allgather");
      out->deleter(out);
    }
    runrun_handle_release(h);
  }
  {  // broadcast from the last rank
    CudaTensor t({10.f * rank, 1.f}, {2}, device, stream);
    if (ok(runrun_broadcast(rt, "bcast", &t.dl, &t.dl, size - 1, 0, &h), "broadcast") &&
        wait(h, "bcast")) {
      expect(read(t.dl, 2, stream) == std::vector<float>{10.f * (size - 1), 1.f}, rank,
             "broadcast");
    }
    runrun_handle_release(h);
  }
  {  // alltoall, equal splits: one row to each rank holding 100 * sender + receiver
    std::vector<float> mine;
    for (int p = 0; p < size; ++p) mine.push_back(100.f * rank + p);
    CudaTensor t(mine, {size}, device, stream);
    DLManagedTensor* out = nullptr;
    if (ok(runrun_alltoall(rt, "a2a", &t.dl, nullptr, 0, 0, &h), "alltoall") && wait(h, "a2a") &&
        ok(runrun_handle_take_output(h, &out), "take_output")) {
      std::vector<float> expected;
      for (int p = 0; p < size; ++p) expected.push_back(100.f * p + rank);
      expect(read(out->dl_tensor, expected.size(), stream) == expected, rank, "alltoall");
      out->deleter(out);
    }
    runrun_handle_release(h);
  }
  {  // reducescatter, sum: one row per rank, row p of every rank is p
    std::vector<float> mine;
    for (int p = 0; p < size; ++p) mine.push_back(float(p));
    CudaTensor t(mine, {size}, device, stream);
    runrun_allreduce_options o = runrun_allreduce_default_options();
    o.op = RUNRUN_OP_SUM;
    DLManagedTensor* out = nullptr;
    if (ok(runrun_reducescatter(rt, "rs", &t.dl, &o, &h), "reducescatter") && wait(h, "rs") &&
        ok(runrun_handle_take_output(h, &out), "take_output")) {
      expect(read(out->dl_tensor, 1, stream) == std::vector<float>{float(size * rank)}, rank,
             "reducescatter");
      out->deleter(out);
    }
    runrun_handle_release(h);
  }
  // Outputs the runtime allocates for a NULL output (TensorFlow's and JAX's out-of-place ops):
  // on the input's device, exact, and freed by their deleters (no cudaMallocAsync left over).
  {  // allreduce, sum: rank + i summed is size * i + size * (size - 1) / 2
    CudaTensor t({0.f + rank, 1.f + rank}, {2}, device, stream);
    runrun_allreduce_options o = runrun_allreduce_default_options();
    o.op = RUNRUN_OP_SUM;
    DLManagedTensor* out = nullptr;
    if (ok(runrun_allreduce(rt, "sum.alloc", &t.dl, nullptr, &o, &h), "allreduce NULL output") &&
        wait(h, "sum.alloc") && ok(runrun_handle_take_output(h, &out), "take_output")) {
      const float base = size * (size - 1) / 2.0f;
      expect(out->dl_tensor.device.device_type == kDLCUDA &&
                 out->dl_tensor.device.device_id == device && out->dl_tensor.data != t.dl.data,
             rank, "allreduce allocated output device");
      expect(read(out->dl_tensor, 2, stream) == std::vector<float>{base, size + base}, rank,
             "allreduce into an allocated output");
      expect(read(t.dl, 2, stream) == std::vector<float>{0.f + rank, 1.f + rank}, rank,
             "allreduce with an allocated output leaves its input");
      out->deleter(out);
    }
    runrun_handle_release(h);
  }
  {  // broadcast from rank 0
    CudaTensor t({7.f + rank}, {1}, device, stream);
    DLManagedTensor* out = nullptr;
    if (ok(runrun_broadcast(rt, "bcast.alloc", &t.dl, nullptr, 0, 0, &h), "broadcast NULL") &&
        wait(h, "bcast.alloc") && ok(runrun_handle_take_output(h, &out), "take_output")) {
      expect(out->dl_tensor.device.device_type == kDLCUDA, rank, "broadcast output device");
      expect(read(out->dl_tensor, 1, stream) == std::vector<float>{7.f}, rank,
             "broadcast into an allocated output");
      out->deleter(out);
    }
    runrun_handle_release(h);
  }
  {  // grouped allreduce (max): one output allocated, one the caller's
    CudaTensor a({1.f * rank}, {1}, device, stream), b({-1.f * rank, 2.f}, {2}, device, stream);
    CudaTensor b_out({0.f, 0.f}, {2}, device, stream);
    const char* names[] = {"group.a", "group.b"};
    const DLTensor* inputs[] = {&a.dl, &b.dl};
    const DLTensor* outputs[] = {nullptr, &b_out.dl};
    runrun_allreduce_options o = runrun_allreduce_default_options();
    o.op = RUNRUN_OP_MAX;
    DLManagedTensor* out = nullptr;
    DLManagedTensor* none = nullptr;
    if (ok(runrun_grouped_allreduce(rt, names, inputs, outputs, 2, &o, &h), "grouped NULL") &&
        wait(h, "group") && ok(runrun_handle_take_output_at(h, 0, &out), "take_output_at")) {
      expect(read(out->dl_tensor, 1, stream) == std::vector<float>{float(size - 1)}, rank,
             "grouped allreduce into an allocated output");
      expect(read(b_out.dl, 2, stream) == std::vector<float>{0.f, 2.f}, rank,
             "grouped allreduce into the caller's output");
      expect(runrun_handle_take_output_at(h, 1, &none) == RUNRUN_INVALID_ARGUMENT, rank,
             "no allocated output for a tensor whose output the caller passed");
      out->deleter(out);
    }
    runrun_handle_release(h);
  }
  {  // a host tensor gets a host output
    std::vector<float> values{1.f, 2.f};
    int64_t shape[] = {2};
    DLTensor host{};
    host.data = values.data();
    host.device = {kDLCPU, 0};
    host.ndim = 1;
    host.dtype = {kDLFloat, 32, 1};
    host.shape = shape;
    runrun_allreduce_options o = runrun_allreduce_default_options();
    DLManagedTensor* out = nullptr;
    if (ok(runrun_allreduce(rt, "host.alloc", &host, nullptr, &o, &h), "host NULL output") &&
        wait(h, "host.alloc") && ok(runrun_handle_take_output(h, &out), "take_output")) {
      const auto* data = static_cast<const float*>(out->dl_tensor.data);
      expect(out->dl_tensor.device.device_type == kDLCPU && data[0] == 1.f && data[1] == 2.f, rank,
             "host allreduce into an allocated output");
      out->deleter(out);
    }
    runrun_handle_release(h);
  }
  cudaStreamSynchronize(stream);  // the deleters' cudaFreeAsync ran
  expect(fake_cuda_async_allocations() >= 6 &&
             fake_cuda_async_allocations() == fake_cuda_async_frees(),
         rank,
         "every device output was freed: " + std::to_string(fake_cuda_async_allocations()) +
             " cudaMallocAsync, " + std::to_string(fake_cuda_async_frees()) + " cudaFreeAsync");
  runrun_shutdown(rt);
  runrun_destroy(rt);
  if (failures == 0)
    std::printf("rank %d: CUDA staging over %s: all ops exact\n", rank,
                argc > 1 ? argv[1] : "auto");
  return failures == 0 ? 0 : 1;
}
