#pragma once
// Why: the stream/event model of CUDA tensors (docs/gpu.md "Streams"): runrun never
// synchronizes a device. A framework produces a tensor on its stream; at enqueue runrun records
// an event there (the producer event), its own stream per device waits on that event before it
// reads, and the op's completion is an event on runrun's stream that the framework's stream is
// made to wait on. These are the few wrappers that model needs over the CUDA runtime loaded at
// run time (ops/cuda/cuda_runtime_library.h); every failed call throws naming the call and the
// device. A top-level ops header (as gpu_libraries.h), so the core's device path
// (core/execution/device_staging.h) uses it without including a backend folder.
// Threading contract: CudaEvent is used by one thread at a time (it is handed from the enqueuing
// thread to the background thread through the queue); runrun_stream() and the pinned pool are
// thread-safe; the per-thread framework stream is the calling thread's own.

#include <cstddef>
#include <memory>
#include <string>

#include "ops/cuda/cuda_abi.h"

namespace runrun::gpu {

// Whether this process found a CUDA runtime that reports at least one GPU (searched once, on
// first call): what CUDA tensors need.
bool cuda_runtime_available();

// Throws InternalError "CUDA call `call` failed on cuda:<device>: <error text>" unless ok.
void check_cuda(cuda_abi::Error error, const char* call, int device);

// Stream-ordered operations on `stream` (work of the device `device`, named in errors).
void copy_async(void* dst, const void* src, size_t bytes, cuda_abi::Stream stream, int device);
void* malloc_async(size_t bytes, cuda_abi::Stream stream, int device);
void free_async(void* data, cuda_abi::Stream stream);  // errors ignored: called by deleters

// Makes `device` current on this thread for the guard's lifetime, then restores the previous
// one (the framework's thread keeps its own current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// A CUDA event without timing on `device`, destroyed with the object.
class CudaEvent {
 public:
  explicit CudaEvent(int device);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  int device() const { return device_; }
  // Marks the point of `stream` reached by the work enqueued on it so far.
  void record(cuda_abi::Stream stream);
  // Makes `stream` wait (on the device, not the host) until the recorded point was reached.
  void make_wait(cuda_abi::Stream stream) const;
  // True once the recorded point was reached; never blocks.
  bool query() const;
  // Blocks the calling thread until the recorded point was reached (only this event's work,
  // never the whole device).
  void synchronize() const;

 private:
  int device_;
  cuda_abi::Event event_ = nullptr;
};

// Keeps `keep` (staging buffers, host copies of outputs) alive until `event` was reached,
// without blocking the caller: what is due is released by later calls of release_after() and
// release_due(), which never block.
void release_after(std::unique_ptr<CudaEvent> event, std::shared_ptr<void> keep);
void release_due();

// runrun's own stream on `device` (non-blocking: it does not wait for the legacy default
// stream), created on first use and kept for the process.
cuda_abi::Stream runrun_stream(int device);

// The stream on which the calling thread's CUDA tensors are produced and consumed: the
// framework's current stream, set by the adapter (C API runrun_set_cuda_stream) before it
// enqueues. nullptr (the default) is the legacy default stream.
void set_framework_stream(cuda_abi::Stream stream);
cuda_abi::Stream framework_stream();

// Page-locked host memory for staging copies: blocks are reused (cudaMallocHost is slow), and
// handed back by the owner's destructor.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;

  std::byte* data() const { return data_; }

 private:
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace runrun::gpu
