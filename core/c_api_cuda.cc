// The CUDA part of the C API (c_api.h, "CUDA tensors"): which stream this thread's CUDA tensors
// are produced and consumed on (ops/cuda_streams.h). Loads nothing: the stream is only
// remembered until a CUDA tensor is enqueued.
#include "ops/cuda_streams.h"
#include "runrun/c_api.h"

void runrun_set_cuda_stream(void* stream) {
  runrun::gpu::set_framework_stream(static_cast<runrun::gpu::cuda_abi::Stream>(stream));
}

void* runrun_cuda_stream(void) { return runrun::gpu::framework_stream(); }
