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

// One rank's runtime, place and framework stream, as every op below uses them.
struct Proc {
  runrun_runtime* rt;
  int rank, size, device;
  CUstream_st* stream;
};

// allreduce, average, in place: mean of rank + i is i + (size - 1) / 2
void allreduce_average(const Proc& c) {
  runrun_handle* h = nullptr;
  CudaTensor t({0.f + c.rank, 1.f + c.rank, 2.f + c.rank}, {3}, c.device, c.stream);
  runrun_allreduce_options o = runrun_allreduce_default_options();
  if (ok(runrun_allreduce(c.rt, "avg", &t.dl, &t.dl, &o, &h), "allreduce") && wait(h, "avg")) {
    const float half = (c.size - 1) / 2.0f;
    expect(read(t.dl, 3, c.stream) == std::vector<float>{half, 1 + half, 2 + half}, c.rank,
           "allreduce average");
  }
  runrun_handle_release(h);
}

// allgather, uneven: rank r has r + 1 rows of one element, all equal to r
void allgather_uneven(const Proc& c) {
  runrun_handle* h = nullptr;
  CudaTensor t(std::vector<float>(static_cast<size_t>(c.rank) + 1, float(c.rank)), {c.rank + 1},
               c.device, c.stream);
  DLManagedTensor* out = nullptr;
  if (ok(runrun_allgather(c.rt, "gather", &t.dl, 0, &h), "allgather") && wait(h, "gather") &&
      ok(runrun_handle_take_output(h, &out), "take_output")) {
    std::vector<float> expected;
    for (int r = 0; r < c.size; ++r) expected.insert(expected.end(), r + 1, float(r));
    expect(
        out->dl_tensor.device.device_type == kDLCUDA && out->dl_tensor.device.device_id == c.device,
        c.rank, "allgather output device");
    expect(read(out->dl_tensor, expected.size(), c.stream) == expected, c.rank, "allgather");
    out->deleter(out);
  }
  runrun_handle_release(h);
}

// broadcast from the last rank
void broadcast_from_last(const Proc& c) {
  runrun_handle* h = nullptr;
  CudaTensor t({10.f * c.rank, 1.f}, {2}, c.device, c.stream);
  if (ok(runrun_broadcast(c.rt, "bcast", &t.dl, &t.dl, c.size - 1, 0, &h), "broadcast") &&
      wait(h, "bcast")) {
    expect(read(t.dl, 2, c.stream) == std::vector<float>{10.f * (c.size - 1), 1.f}, c.rank,
           "broadcast");
  }
  runrun_handle_release(h);
}

// alltoall, equal splits: one row to each rank holding 100 * sender + receiver
void alltoall_equal(const Proc& c) {
  runrun_handle* h = nullptr;
  std::vector<float> mine;
  for (int p = 0; p < c.size; ++p) mine.push_back(100.f * c.rank + p);
  CudaTensor t(mine, {c.size}, c.device, c.stream);
  DLManagedTensor* out = nullptr;
  if (ok(runrun_alltoall(c.rt, "a2a", &t.dl, nullptr, 0, 0, &h), "alltoall") && wait(h, "a2a") &&
      ok(runrun_handle_take_output(h, &out), "take_output")) {
    std::vector<float> expected;
    for (int p = 0; p < c.size; ++p) expected.push_back(100.f * p + c.rank);
    expect(read(out->dl_tensor, expected.size(), c.stream) == expected, c.rank, "alltoall");
    out->deleter(out);
  }
  runrun_handle_release(h);
}

// reducescatter, sum: one row per rank, row p of every rank is p
void reducescatter_sum(const Proc& c) {
  runrun_handle* h = nullptr;
  std::vector<float> mine;
  for (int p = 0; p < c.size; ++p) mine.push_back(float(p));
  CudaTensor t(mine, {c.size}, c.device, c.stream);
  runrun_allreduce_options o = runrun_allreduce_default_options();
  o.op = RUNRUN_OP_SUM;
  DLManagedTensor* out = nullptr;
  if (ok(runrun_reducescatter(c.rt, "rs", &t.dl, &o, &h), "reducescatter") && wait(h, "rs") &&
      ok(runrun_handle_take_output(h, &out), "take_output")) {
    expect(read(out->dl_tensor, 1, c.stream) == std::vector<float>{float(c.size * c.rank)}, c.rank,
           "reducescatter");
    out->deleter(out);
  }
  runrun_handle_release(h);
}

// Outputs the runtime allocates for a NULL output (TensorFlow's and JAX's out-of-place ops):
// on the input's device, exact, and freed by their deleters (no cudaMallocAsync left over).
// allreduce, sum: rank + i summed is size * i + size * (size - 1) / 2
void allreduce_allocated(const Proc& c) {
  runrun_handle* h = nullptr;
  CudaTensor t({0.f + c.rank, 1.f + c.rank}, {2}, c.device, c.stream);
  runrun_allreduce_options o = runrun_allreduce_default_options();
  o.op = RUNRUN_OP_SUM;
  DLManagedTensor* out = nullptr;
  if (ok(runrun_allreduce(c.rt, "sum.alloc", &t.dl, nullptr, &o, &h), "allreduce NULL output") &&
      wait(h, "sum.alloc") && ok(runrun_handle_take_output(h, &out), "take_output")) {
    const float base = c.size * (c.size - 1) / 2.0f;
    expect(out->dl_tensor.device.device_type == kDLCUDA &&
               out->dl_tensor.device.device_id == c.device && out->dl_tensor.data != t.dl.data,
           c.rank, "allreduce allocated output device");
    expect(read(out->dl_tensor, 2, c.stream) == std::vector<float>{base, c.size + base}, c.rank,
           "allreduce into an allocated output");
    expect(read(t.dl, 2, c.stream) == std::vector<float>{0.f + c.rank, 1.f + c.rank}, c.rank,
           "allreduce with an allocated output leaves its input");
    out->deleter(out);
  }
  runrun_handle_release(h);
}

// broadcast from rank 0
void broadcast_allocated(const Proc& c) {
  runrun_handle* h = nullptr;
  CudaTensor t({7.f + c.rank}, {1}, c.device, c.stream);
  DLManagedTensor* out = nullptr;
  if (ok(runrun_broadcast(c.rt, "bcast.alloc", &t.dl, nullptr, 0, 0, &h), "broadcast NULL") &&
      wait(h, "bcast.alloc") && ok(runrun_handle_take_output(h, &out), "take_output")) {
    expect(out->dl_tensor.device.device_type == kDLCUDA, c.rank, "broadcast output device");
    expect(read(out->dl_tensor, 1, c.stream) == std::vector<float>{7.f}, c.rank,
           "broadcast into an allocated output");
    out->deleter(out);
  }
  runrun_handle_release(h);
}

// grouped allreduce (max): one output allocated, one the caller's
void grouped_allocated(const Proc& c) {
  runrun_handle* h = nullptr;
  CudaTensor a({1.f * c.rank}, {1}, c.device, c.stream),
      b({-1.f * c.rank, 2.f}, {2}, c.device, c.stream);
  CudaTensor b_out({0.f, 0.f}, {2}, c.device, c.stream);
  const char* names[] = {"group.a", "group.b"};
  const DLTensor* inputs[] = {&a.dl, &b.dl};
  const DLTensor* outputs[] = {nullptr, &b_out.dl};
  runrun_allreduce_options o = runrun_allreduce_default_options();
  o.op = RUNRUN_OP_MAX;
  DLManagedTensor* out = nullptr;
  DLManagedTensor* none = nullptr;
  if (ok(runrun_grouped_allreduce(c.rt, names, inputs, outputs, 2, &o, &h), "grouped NULL") &&
      wait(h, "group") && ok(runrun_handle_take_output_at(h, 0, &out), "take_output_at")) {
    expect(read(out->dl_tensor, 1, c.stream) == std::vector<float>{float(c.size - 1)}, c.rank,
           "grouped allreduce into an allocated output");
    expect(read(b_out.dl, 2, c.stream) == std::vector<float>{0.f, 2.f}, c.rank,
           "grouped allreduce into the caller's output");
    expect(runrun_handle_take_output_at(h, 1, &none) == RUNRUN_INVALID_ARGUMENT, c.rank,
           "no allocated output for a tensor whose output the caller passed");
    out->deleter(out);
  }
  runrun_handle_release(h);
}

// a host tensor gets a host output
void host_allocated(const Proc& c) {
  runrun_handle* h = nullptr;
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
  if (ok(runrun_allreduce(c.rt, "host.alloc", &host, nullptr, &o, &h), "host NULL output") &&
      wait(h, "host.alloc") && ok(runrun_handle_take_output(h, &out), "take_output")) {
    const auto* data = static_cast<const float*>(out->dl_tensor.data);
    expect(out->dl_tensor.device.device_type == kDLCPU && data[0] == 1.f && data[1] == 2.f, c.rank,
           "host allreduce into an allocated output");
    out->deleter(out);
  }
  runrun_handle_release(h);
}

}  // namespace

int main(int argc, char** argv) {
  runrun_runtime* rt = nullptr;
  if (!ok(runrun_init(argc > 1 ? argv[1] : nullptr, &rt), "runrun_init")) return 2;
  runrun_topology topo{};
  runrun_get_topology(rt, &topo);
  const int rank = topo.rank;
  CUstream_st* stream = runrun::testing::new_framework_stream();
  runrun_set_cuda_stream(stream);
  const Proc c{rt, rank, topo.size, topo.local_rank, stream};
  allreduce_average(c);
  allgather_uneven(c);
  broadcast_from_last(c);
  alltoall_equal(c);
  reducescatter_sum(c);
  allreduce_allocated(c);
  broadcast_allocated(c);
  grouped_allocated(c);
  host_allocated(c);
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
