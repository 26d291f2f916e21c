#include "ops/cuda_streams.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "ops/cuda/cuda_runtime_library.h"

namespace runrun::gpu {

bool cuda_runtime_available() {
  static const bool usable = [] {
    const CudaRuntimeProbe& probe = probe_cuda_runtime();
    if (probe.library == nullptr) return false;
    int devices = 0;
    return probe.library->get_device_count(&devices) == cuda_abi::kSuccess && devices > 0;
  }();
  return usable;
}

void copy_async(void* dst, const void* src, size_t bytes, cuda_abi::Stream stream, int device) {
  if (bytes == 0) return;
  check_cuda(cuda_runtime().memcpy_async(dst, src, bytes, cuda_abi::kMemcpyDefault, stream),
             "cudaMemcpyAsync", device);
}

void* malloc_async(size_t bytes, cuda_abi::Stream stream, int device) {
  void* data = nullptr;
  check_cuda(cuda_runtime().malloc_async(&data, bytes, stream), "cudaMallocAsync", device);
  return data;
}

void free_async(void* data, cuda_abi::Stream stream) { cuda_runtime().free_async(data, stream); }

void check_cuda(cuda_abi::Error error, const char* call, int device) {
  if (error == cuda_abi::kSuccess) return;
  throw InternalError(RUNRUN_WHERE, std::string("CUDA call ") + call +
                                        " failed on cuda:" + std::to_string(device) + ": " +
                                        cuda_runtime().error_text(error));
}

DeviceGuard::DeviceGuard(int device) {
  const CudaRuntimeLibrary& cuda = cuda_runtime();
  check_cuda(cuda.get_device(&previous_), "cudaGetDevice", device);
  if (previous_ != device) check_cuda(cuda.set_device(device), "cudaSetDevice", device);
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  const CudaRuntimeLibrary& cuda = cuda_runtime();
  if (cuda.get_device(&current) == cuda_abi::kSuccess && current != previous_) {
    cuda.set_device(previous_);
  }
}

CudaEvent::CudaEvent(int device) : device_(device) {
  DeviceGuard guard(device);
  check_cuda(cuda_runtime().event_create_with_flags(&event_, cuda_abi::kEventDisableTiming),
             "cudaEventCreateWithFlags", device);
}

CudaEvent::~CudaEvent() {
  if (event_ != nullptr) cuda_runtime().event_destroy(event_);
}

void CudaEvent::record(cuda_abi::Stream stream) {
  check_cuda(cuda_runtime().event_record(event_, stream), "cudaEventRecord", device_);
}

void CudaEvent::make_wait(cuda_abi::Stream stream) const {
  check_cuda(cuda_runtime().stream_wait_event(stream, event_, 0), "cudaStreamWaitEvent", device_);
}

bool CudaEvent::query() const {
  const cuda_abi::Error error = cuda_runtime().event_query(event_);
  if (error == cuda_abi::kErrorNotReady) return false;
  check_cuda(error, "cudaEventQuery", device_);
  return true;
}

void CudaEvent::synchronize() const {
  check_cuda(cuda_runtime().event_synchronize(event_), "cudaEventSynchronize", device_);
}

namespace {
struct PendingRelease {
  std::unique_ptr<CudaEvent> event;
  std::shared_ptr<void> keep;
};
struct ReleaseList {
  std::mutex mutex;
  std::vector<PendingRelease> pending;
};
ReleaseList& release_list() {
  static ReleaseList* list = new ReleaseList;  // never destroyed: released at exit by the OS
  return *list;
}
// Drops the entries whose event was reached; the caller holds the list's mutex.
void sweep(std::vector<PendingRelease>& pending) {
  std::erase_if(pending, [](const PendingRelease& p) { return p.event->query(); });
}
}  // namespace

void release_after(std::unique_ptr<CudaEvent> event, std::shared_ptr<void> keep) {
  ReleaseList& list = release_list();
  std::lock_guard<std::mutex> lock(list.mutex);
  sweep(list.pending);
  list.pending.push_back({std::move(event), std::move(keep)});
}

void release_due() {
  ReleaseList& list = release_list();
  std::lock_guard<std::mutex> lock(list.mutex);
  sweep(list.pending);
}

cuda_abi::Stream runrun_stream(int device) {
  static std::mutex mutex;
  static std::map<int, cuda_abi::Stream> streams;  // kept for the process, as the library
  std::lock_guard<std::mutex> lock(mutex);
  auto it = streams.find(device);
  if (it != streams.end()) return it->second;
  DeviceGuard guard(device);
  cuda_abi::Stream stream = nullptr;
  check_cuda(cuda_runtime().stream_create_with_flags(&stream, cuda_abi::kStreamNonBlocking),
             "cudaStreamCreateWithFlags", device);
  streams.emplace(device, stream);
  return stream;
}

namespace {
thread_local cuda_abi::Stream current_framework_stream = nullptr;

// Free pinned blocks by capacity; blocks are never returned to CUDA (staging sizes repeat).
struct PinnedPool {
  std::mutex mutex;
  std::multimap<size_t, std::byte*> free_blocks;
};
PinnedPool& pinned_pool() {
  static PinnedPool* pool = new PinnedPool;  // never destroyed: buffers may outlive statics
  return *pool;
}
}  // namespace

void set_framework_stream(cuda_abi::Stream stream) { current_framework_stream = stream; }
cuda_abi::Stream framework_stream() { return current_framework_stream; }

PinnedBuffer::PinnedBuffer(size_t bytes) {
  size_t capacity = 64 << 10;
  while (capacity < bytes) capacity *= 2;
  {
    PinnedPool& pool = pinned_pool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.free_blocks.lower_bound(capacity);
    if (it != pool.free_blocks.end()) {
      capacity_ = it->first;
      data_ = it->second;
      pool.free_blocks.erase(it);
      return;
    }
  }
  void* block = nullptr;
  const cuda_abi::Error error = cuda_runtime().malloc_host(&block, capacity);
  if (error != cuda_abi::kSuccess) {
    throw InternalError(RUNRUN_WHERE, "cudaMallocHost of " + std::to_string(capacity) +
                                          " bytes of pinned staging memory failed: " +
                                          cuda_runtime().error_text(error));
  }
  data_ = static_cast<std::byte*>(block);
  capacity_ = capacity;
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ == nullptr) return;
  PinnedPool& pool = pinned_pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.free_blocks.emplace(capacity_, data_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    PinnedBuffer old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

}  // namespace runrun::gpu
