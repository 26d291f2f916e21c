// The CUDA part of the C API (c_api.h, "CUDA tensors"): which stream this thread's CUDA tensors
// are produced and consumed on (ops/cuda_streams.h), a host wait on one such stream for a
// framework that has no stream to hand over, and a stream-ordered copy into a buffer the
// framework allocated (runrun_copy_tensor). Setting the stream loads nothing: it is only
// remembered until a CUDA tensor is enqueued.
#include <cstring>
#include <string>

#include "common/errors.h"
#include "core/c_api_last_error.h"
#include "ops/cuda_streams.h"
#include "ops/gpu_libraries.h"
#include "runrun/c_api.h"

namespace {

bool on_host(const DLTensor& t) {
  return t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
}

bool row_major(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

std::string describe(const DLTensor& t) {
  std::string s = "(";
  for (int32_t d = 0; d < t.ndim; ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
  s += t.ndim == 1 ? ",)" : ")";
  return s + " of " + std::to_string(t.dtype.bits) + "-bit code " +
         std::to_string(static_cast<int>(t.dtype.code)) + " on " +
         (on_host(t) ? std::string("the host") : "cuda:" + std::to_string(t.device.device_id));
}

size_t byte_size(const DLTensor& t) {
  size_t n = (static_cast<size_t>(t.dtype.bits) * t.dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < t.ndim; ++d) n *= static_cast<size_t>(t.shape[d]);
  return n;
}

bool same_layout(const DLTensor& a, const DLTensor& b) {
  if (a.ndim != b.ndim || a.dtype.code != b.dtype.code || a.dtype.bits != b.dtype.bits ||
      a.dtype.lanes != b.dtype.lanes) {
    return false;
  }
  for (int32_t d = 0; d < a.ndim; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
  }
  return true;
}

// Runs `body`, turning runrun's exceptions into their status and the thread's last error.
template <class Body>
runrun_status guarded(Body&& body) {
  runrun::capi::set_last_error("");
  try {
    body();
    return RUNRUN_OK;
  } catch (const runrun::Error& e) {
    runrun::capi::set_last_error(e.what());
    return static_cast<runrun_status>(e.code());
  } catch (const std::exception& e) {
    runrun::capi::set_last_error(std::string("internal error: ") + e.what());
    return RUNRUN_INTERNAL;
  }
}

// Throws UnsupportedError naming `what` and the library search's result without a CUDA runtime.
void require_cuda_runtime(const char* what, int device) {
  if (runrun::gpu::cuda_runtime_available()) return;
  throw runrun::UnsupportedError(
      RUNRUN_WHERE, std::string(what) + " on cuda:" + std::to_string(device) +
                        ": this process has no usable CUDA runtime with a GPU; looked for: " +
                        runrun::gpu_libraries_found().cuda_runtime_text +
                        " (docs/gpu.md, \"How the libraries are found\")");
}

}  // namespace

void runrun_set_cuda_stream(void* stream) {
  runrun::gpu::set_framework_stream(static_cast<runrun::gpu::cuda_abi::Stream>(stream));
}

void* runrun_cuda_stream(void) { return runrun::gpu::framework_stream(); }

runrun_status runrun_cuda_stream_wait_host(void* stream, int32_t device) {
  return guarded([&] {
    require_cuda_runtime("runrun_cuda_stream_wait_host", device);
    runrun::gpu::DeviceGuard guard(device);
    runrun::gpu::CudaEvent reached(device);
    reached.record(static_cast<runrun::gpu::cuda_abi::Stream>(stream));
    reached.synchronize();
  });
}

runrun_status runrun_copy_tensor(const DLTensor* src, const DLTensor* dst) {
  return guarded([&] {
    if (src == nullptr || dst == nullptr) {
      throw runrun::InvalidArgumentError(RUNRUN_WHERE, "runrun_copy_tensor: null tensor");
    }
    if (!same_layout(*src, *dst) || !row_major(*src) || !row_major(*dst)) {
      throw runrun::InvalidArgumentError(
          RUNRUN_WHERE, "runrun_copy_tensor: the source " + describe(*src) +
                            " and the destination " + describe(*dst) +
                            " must have the same dtype and shape, both contiguous");
    }
    const size_t bytes = byte_size(*src);
    const char* from = static_cast<const char*>(src->data) + src->byte_offset;
    char* to = static_cast<char*>(dst->data) + dst->byte_offset;
    if (on_host(*src) && on_host(*dst)) {
      if (bytes) std::memmove(to, from, bytes);
      return;
    }
    const int device = on_host(*src) ? dst->device.device_id : src->device.device_id;
    require_cuda_runtime("runrun_copy_tensor", device);
    runrun::gpu::DeviceGuard guard(device);
    runrun::gpu::copy_async(to, from, bytes, runrun::gpu::framework_stream(), device);
  });
}
