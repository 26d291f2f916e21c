// Test fixture of tests/unit/gpu: a working fake of the CUDA runtime (the entry points runrun
// resolves, ops/cuda/cuda_runtime_library.cc), so the stream/event model and the staging of
// CUDA tensors (core/execution/device_staging.h) run on machines without a GPU. "Device memory" is
// host
// memory; each stream is a FIFO worker thread, so work enqueued on a stream runs later and in
// order, and a missing wait shows up as stale bytes: fake_cuda_set_delay_us() delays every item
// of every stream (fake_cuda_set_stream_delay_us() those of one), fake_cuda_hold_stream() keeps
// a stream's items from running until released.
// Events are counters of recorded and reached points; cudaStreamWaitEvent blocks the waiting
// stream's worker. The legacy default stream (nullptr) is one more stream (it does not model
// the implicit synchronization with blocking streams). Streams live for the process.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

struct CUstream_st {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> work;
  bool held = false;
  bool busy = false;
  std::atomic<int> delay_us{-1};  // -1: the global delay
};

struct EventState {
  std::mutex mutex;
  std::condition_variable reached_cv;
  uint64_t recorded = 0;  // points recorded so far
  uint64_t reached = 0;   // the last point the stream got past
};

// An event handle; stream items hold its state, so destroying the handle with work pending
// (which CUDA allows) leaves them valid.
struct CUevent_st {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kNotReady = 600;

// FAKE_CUDA_DELAY_US: a delay for every stream item from the start (process tests).
int initial_delay_us() {
  const char* text = std::getenv("FAKE_CUDA_DELAY_US");
  return text != nullptr ? std::atoi(text) : 0;
}
std::atomic<int> delay_us{initial_delay_us()};
thread_local int current_device = 0;

void run_stream(CUstream_st* s) {
  for (;;) {
    std::function<void()> item;
    {
      std::unique_lock<std::mutex> lock(s->mutex);
      s->changed.wait(lock, [s] { return !s->held && !s->work.empty(); });
      item = std::move(s->work.front());
      s->work.pop_front();
      s->busy = true;
    }
    const int own = s->delay_us.load();
    const int us = own >= 0 ? own : delay_us.load();
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    item();
    std::lock_guard<std::mutex> lock(s->mutex);
    s->busy = false;
    s->changed.notify_all();
  }
}

CUstream_st* new_stream() {
  auto* s = new CUstream_st;  // never freed: runrun keeps its streams for the process
  std::thread(run_stream, s).detach();
  return s;
}

CUstream_st* resolve(CUstream_st* s) {
  static CUstream_st* legacy = new_stream();
  return s != nullptr ? s : legacy;
}

void enqueue(CUstream_st* s, std::function<void()> item) {
  s = resolve(s);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->work.push_back(std::move(item));
  s->changed.notify_all();
}

using Event = std::shared_ptr<EventState>;

void mark(const Event& e, uint64_t point) {
  std::lock_guard<std::mutex> lock(e->mutex);
  e->reached = std::max(e->reached, point);
  e->reached_cv.notify_all();
}

void wait_reached(const Event& e, uint64_t point) {
  std::unique_lock<std::mutex> lock(e->mutex);
  e->reached_cv.wait(lock, [&] { return e->reached >= point; });
}

}  // namespace

extern "C" {

// --- test controls ---
void fake_cuda_set_delay_us(int us) { delay_us.store(us); }
// A delay for one stream's items (-1: back to the global one).
void fake_cuda_set_stream_delay_us(CUstream_st* s, int us) { resolve(s)->delay_us.store(us); }
void fake_cuda_hold_stream(CUstream_st* s) {
  s = resolve(s);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->held = true;
}
void fake_cuda_release_stream(CUstream_st* s) {
  s = resolve(s);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->held = false;
  s->changed.notify_all();
}

// --- the CUDA runtime's entry points ---
int cudaRuntimeGetVersion(int* version) {
  *version = 12040;
  return kSuccess;
}
int cudaDriverGetVersion(int* version) {
  *version = 12040;
  return kSuccess;
}
int cudaGetDeviceCount(int* count) {
  *count = 4;
  return kSuccess;
}
const char* cudaGetErrorString(int) { return "fake CUDA error"; }
int cudaGetDevice(int* device) {
  *device = current_device;
  return kSuccess;
}
int cudaSetDevice(int device) {
  if (device < 0 || device >= 4) return kInvalidValue;
  current_device = device;
  return kSuccess;
}

int cudaStreamCreateWithFlags(CUstream_st** stream, unsigned) {
  *stream = new_stream();
  return kSuccess;
}
int cudaStreamDestroy(CUstream_st*) { return kSuccess; }  // kept: its worker may still run
int cudaStreamSynchronize(CUstream_st* s) {
  Event e = std::make_shared<EventState>();
  e->recorded = 1;
  enqueue(s, [e] { mark(e, 1); });
  wait_reached(e, 1);
  return kSuccess;
}
int cudaStreamWaitEvent(CUstream_st* s, CUevent_st* handle, unsigned) {
  Event e = handle->state;
  uint64_t point;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    point = e->recorded;
  }
  enqueue(s, [e, point] { wait_reached(e, point); });
  return kSuccess;
}

int cudaEventCreateWithFlags(CUevent_st** event, unsigned) {
  *event = new CUevent_st;
  return kSuccess;
}
int cudaEventDestroy(CUevent_st* handle) {
  delete handle;
  return kSuccess;
}
int cudaEventRecord(CUevent_st* handle, CUstream_st* s) {
  Event e = handle->state;
  uint64_t point;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    point = ++e->recorded;
  }
  enqueue(s, [e, point] { mark(e, point); });
  return kSuccess;
}
int cudaEventQuery(CUevent_st* handle) {
  const Event& e = handle->state;
  std::lock_guard<std::mutex> lock(e->mutex);
  return e->reached >= e->recorded ? kSuccess : kNotReady;
}
int cudaEventSynchronize(CUevent_st* handle) {
  Event e = handle->state;
  uint64_t point;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    point = e->recorded;
  }
  wait_reached(e, point);
  return kSuccess;
}

// Used by the fake NCCL (fake_nccl.cc) to run its collectives in stream order.
int cudaLaunchHostFunc(CUstream_st* s, void (*fn)(void*), void* data) {
  enqueue(s, [fn, data] { fn(data); });
  return kSuccess;
}
int cudaMemcpyAsync(void* dst, const void* src, size_t bytes, int, CUstream_st* s) {
  enqueue(s, [=] { std::memcpy(dst, src, bytes); });
  return kSuccess;
}
int cudaMemsetAsync(void* dst, int value, size_t bytes, CUstream_st* s) {
  enqueue(s, [=] { std::memset(dst, value, bytes); });
  return kSuccess;
}
int cudaMalloc(void** p, size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *p != nullptr ? kSuccess : 2;
}
int cudaFree(void* p) {
  std::free(p);
  return kSuccess;
}
int cudaMallocHost(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
int cudaFreeHost(void* p) { return cudaFree(p); }
// Stream-ordered allocations and the frees that ran, for the tests' leak checks.
std::atomic<long> async_allocations{0};
std::atomic<long> async_frees{0};
int cudaMallocAsync(void** p, size_t bytes, CUstream_st*) {
  const int status = cudaMalloc(p, bytes);
  if (status == kSuccess) ++async_allocations;
  return status;
}
int cudaFreeAsync(void* p, CUstream_st* s) {
  enqueue(s, [p] {
    std::free(p);
    ++async_frees;
  });
  return kSuccess;
}
long fake_cuda_async_allocations() { return async_allocations.load(); }
long fake_cuda_async_frees() { return async_frees.load(); }

}  // extern "C"
