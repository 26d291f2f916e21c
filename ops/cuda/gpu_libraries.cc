#include "ops/gpu_libraries.h"

#include "ops/cuda/cuda_runtime_library.h"
#include "ops/nccl/nccl_library.h"

namespace runrun {
namespace {

std::string describe_cuda_runtime(const gpu::CudaRuntimeProbe& probe) {
  if (probe.library == nullptr) return probe.problem;
  const gpu::CudaRuntimeLibrary& cuda = *probe.library;
  std::string out = "CUDA runtime " + gpu::cuda_version_string(cuda.version) + " at " + cuda.path +
                    " (" + cuda.found_by + ")";
  int devices = 0;
  const gpu::cuda_abi::Error error = cuda.get_device_count(&devices);
  out += error == gpu::cuda_abi::kSuccess ? ", " + std::to_string(devices) + " GPU(s)"
                                          : ", no usable GPU: " + cuda.error_text(error);
  return out;
}

std::string describe_nccl(const gpu::NcclProbe& probe) {
  if (probe.library == nullptr) return probe.problem;
  return "NCCL " + gpu::nccl_version_string(probe.library->version) + " at " + probe.library->path +
         " (" + probe.library->found_by + ")";
}

GpuLibrariesFound search() {
  GpuLibrariesFound found;
  const gpu::CudaRuntimeProbe& cuda = gpu::probe_cuda_runtime();
  const gpu::NcclProbe& nccl = gpu::probe_nccl();
  found.cuda_runtime = cuda.library != nullptr;
  found.nccl = nccl.library != nullptr;
  found.cuda_runtime_text = describe_cuda_runtime(cuda);
  found.nccl_text = describe_nccl(nccl);
  return found;
}

}  // namespace

const GpuLibrariesFound& gpu_libraries_found() {
  static const GpuLibrariesFound found = search();
  return found;
}

}  // namespace runrun
