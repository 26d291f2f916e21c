// The CUDA part of the C API (c_api.h, "CUDA tensors"): which stream this thread's CUDA tensors
// are produced and consumed on (ops/cuda_streams.h), a host wait on one such stream for a
// framework that has no stream to hand over, and a stream-ordered copy into a buffer the
// framework allocated (runrun_copy_tensor). Setting the stream loads nothing: it is only
// remembered until a CUDA tensor is enqueued.
#include <cstring>
#include <string>

#include "common/data_type.h"
#include "common/errors.h"
#include "core/api/c_api_last_error.h"
#include "core/api/dlpack_convert.h"
#include "core/negotiation/message.h"
#include "ops/cuda_streams.h"
#include "ops/device.h"
#include "ops/gpu_libraries.h"
#include "runrun/c_api.h"

namespace {

// One side of runrun_copy_tensor, checked: a supported dtype, contiguous, no negative
// dimension, memory on the host or a CUDA device, and an address when it has bytes.
runrun::TensorView copy_side(const DLTensor* tensor, const std::string& what) {
  runrun::TensorView view = runrun::view_from_dlpack(tensor, "runrun_copy_tensor: the " + what);
  for (int64_t d : view.shape) {
    if (d < 0) {
      throw runrun::InvalidArgumentError(RUNRUN_WHERE, "runrun_copy_tensor: the " + what +
                                                           " has a negative dimension (shape " +
                                                           runrun::shape_string(view.shape) + ")");
    }
  }
  if (!runrun::is_cpu(view.device) && view.device.device_type != kDLCUDA) {
    throw runrun::InvalidArgumentError(RUNRUN_WHERE,
                                       "runrun_copy_tensor: the " + what + " is on " +
                                           runrun::device_string(view.device) +
                                           "; only host and CUDA memory are supported");
  }
  if (view.data == nullptr && view.num_bytes() > 0) {
    throw runrun::InvalidArgumentError(RUNRUN_WHERE,
                                       "runrun_copy_tensor: the " + what + " has no data pointer");
  }
  return view;
}

std::string describe(const runrun::TensorView& t) {
  return runrun::shape_string(t.shape) + " " + std::string(runrun::data_type_name(t.dtype)) +
         " on " + runrun::device_string(t.device);
}

using runrun::capi::guarded;

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
    const runrun::TensorView from = copy_side(src, "source");
    const runrun::TensorView to = copy_side(dst, "destination");
    if (from.dtype != to.dtype || from.shape != to.shape) {
      throw runrun::InvalidArgumentError(RUNRUN_WHERE, "runrun_copy_tensor: the source " +
                                                           describe(from) +
                                                           " and the destination " + describe(to) +
                                                           " must have the same dtype and shape");
    }
    const bool cuda_from = !runrun::is_cpu(from.device), cuda_to = !runrun::is_cpu(to.device);
    if (cuda_from && cuda_to && from.device.device_id != to.device.device_id) {
      throw runrun::InvalidArgumentError(
          RUNRUN_WHERE, "runrun_copy_tensor: the source is on " +
                            runrun::device_string(from.device) + " and the destination on " +
                            runrun::device_string(to.device) + "; copy within one device");
    }
    const size_t bytes = from.num_bytes();
    if (!cuda_from && !cuda_to) {
      if (bytes) std::memmove(to.data, from.data, bytes);
      return;
    }
    const int device = cuda_from ? from.device.device_id : to.device.device_id;
    require_cuda_runtime("runrun_copy_tensor", device);
    runrun::gpu::DeviceGuard guard(device);
    runrun::gpu::copy_async(to.data, from.data, bytes, runrun::gpu::framework_stream(), device);
  });
}
