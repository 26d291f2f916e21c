// The CUDA part of the C API (c_api.h, "CUDA tensors"): which stream this thread's CUDA tensors
// are produced and consumed on (ops/cuda_streams.h), and a host wait on one such stream for a
// framework that has no stream to hand over. Setting the stream loads nothing: it is only
// remembered until a CUDA tensor is enqueued.
#include <string>

#include "common/errors.h"
#include "core/c_api_last_error.h"
#include "ops/cuda_streams.h"
#include "ops/gpu_libraries.h"
#include "runrun/c_api.h"

void runrun_set_cuda_stream(void* stream) {
  runrun::gpu::set_framework_stream(static_cast<runrun::gpu::cuda_abi::Stream>(stream));
}

void* runrun_cuda_stream(void) { return runrun::gpu::framework_stream(); }

runrun_status runrun_cuda_stream_wait_host(void* stream, int32_t device) {
  runrun::capi::set_last_error("");
  try {
    if (!runrun::gpu::cuda_runtime_available()) {
      throw runrun::UnsupportedError(
          RUNRUN_WHERE, "runrun_cuda_stream_wait_host on cuda:" + std::to_string(device) +
                            ": this process has no usable CUDA runtime with a GPU; looked for: " +
                            runrun::gpu_libraries_found().cuda_runtime_text +
                            " (docs/gpu.md, \"How the libraries are found\")");
    }
    runrun::gpu::DeviceGuard guard(device);
    runrun::gpu::CudaEvent reached(device);
    reached.record(static_cast<runrun::gpu::cuda_abi::Stream>(stream));
    reached.synchronize();
    return RUNRUN_OK;
  } catch (const runrun::Error& e) {
    runrun::capi::set_last_error(e.what());
    return static_cast<runrun_status>(e.code());
  } catch (const std::exception& e) {
    runrun::capi::set_last_error(std::string("internal error: ") + e.what());
    return RUNRUN_INTERNAL;
  }
}
