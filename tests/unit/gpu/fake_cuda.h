#pragma once
// Why: the tests of CUDA tensors without a GPU play the framework against the fake CUDA runtime
// (fake_cuda_runtime.cc), which they link as the test executable's own copy and which runrun
// opens through RUNRUN_CUDART_LIBRARY (the same file, so one state): a framework stream, device
// tensors written and read on it, and the fake's controls (delays, held streams).
// Threading contract: as the CUDA runtime's; a DeviceBytes is used by one thread.

#include <cstddef>
#include <cstring>
#include <vector>

#include "ops/cuda/cuda_abi.h"

extern "C" {
void fake_cuda_set_delay_us(int us);
void fake_cuda_set_stream_delay_us(CUstream_st* stream, int us);
void fake_cuda_hold_stream(CUstream_st* stream);
void fake_cuda_release_stream(CUstream_st* stream);
int cudaStreamCreateWithFlags(CUstream_st** stream, unsigned flags);
int cudaStreamSynchronize(CUstream_st* stream);
int cudaMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, CUstream_st* stream);
int cudaMalloc(void** p, size_t bytes);
int cudaFree(void* p);
// cudaMallocAsync calls so far, and cudaFreeAsync calls whose free ran on its stream.
long fake_cuda_async_allocations();
long fake_cuda_async_frees();
long fake_nccl_calls();  // fake_nccl.cc: communication calls so far (NCCL tests only)
}

namespace runrun::testing {

inline CUstream_st* new_framework_stream() {
  CUstream_st* stream = nullptr;
  cudaStreamCreateWithFlags(&stream, 0);
  return stream;
}

// "Device" memory written and read in stream order on `stream` (the framework's).
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes) : bytes_(bytes) {
    cudaMalloc(&data_, bytes ? bytes : 1);
    std::memset(data_, 0, bytes ? bytes : 1);
  }
  ~DeviceBytes() { cudaFree(data_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  void* data() const { return data_; }
  // Enqueues a copy of `host` in (host must live until the stream ran it).
  void write_async(const std::vector<std::byte>& host, CUstream_st* stream) {
    cudaMemcpyAsync(data_, host.data(), host.size(), 4, stream);
  }
  static std::vector<std::byte> read(const void* device, size_t bytes, CUstream_st* stream) {
    std::vector<std::byte> host(bytes);
    cudaMemcpyAsync(host.data(), device, bytes, 4, stream);
    cudaStreamSynchronize(stream);
    return host;
  }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

}  // namespace runrun::testing
