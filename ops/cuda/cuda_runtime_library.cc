#include "ops/cuda/cuda_runtime_library.h"

#include <memory>

#include "common/env_names.h"
#include "common/errors.h"
#include "ops/cuda/symbol_table.h"

namespace runrun::gpu {
CudaRuntimeProbe open_cuda_runtime(const LibrarySpec& spec) {
  CudaRuntimeProbe probe;
  const LibrarySearchResult found = search_library(spec);
  if (!found.found()) {
    probe.problem = describe_search_failure(spec, found);
    return probe;
  }
  auto library = std::make_unique<CudaRuntimeLibrary>();
  library->path = found.path;
  library->found_by = found.found_by;
  SymbolTable symbols(found.handle);
  symbols.resolve(library->runtime_get_version, "cudaRuntimeGetVersion");
  symbols.resolve(library->driver_get_version, "cudaDriverGetVersion");
  symbols.resolve(library->get_device_count, "cudaGetDeviceCount");
  symbols.resolve(library->get_device, "cudaGetDevice");
  symbols.resolve(library->set_device, "cudaSetDevice");
  symbols.resolve(library->get_error_string, "cudaGetErrorString");
  symbols.resolve(library->stream_create_with_flags, "cudaStreamCreateWithFlags");
  symbols.resolve(library->stream_destroy, "cudaStreamDestroy");
  symbols.resolve(library->stream_wait_event, "cudaStreamWaitEvent");
  symbols.resolve(library->event_create_with_flags, "cudaEventCreateWithFlags");
  symbols.resolve(library->event_destroy, "cudaEventDestroy");
  symbols.resolve(library->event_record, "cudaEventRecord");
  symbols.resolve(library->event_query, "cudaEventQuery");
  symbols.resolve(library->event_synchronize, "cudaEventSynchronize");
  symbols.resolve(library->memcpy_async, "cudaMemcpyAsync");
  symbols.resolve(library->memset_async, "cudaMemsetAsync");
  symbols.resolve(library->malloc_device, "cudaMalloc");
  symbols.resolve(library->free_device, "cudaFree");
  symbols.resolve(library->malloc_host, "cudaMallocHost");
  symbols.resolve(library->free_host, "cudaFreeHost");
  symbols.resolve(library->malloc_async, "cudaMallocAsync");
  symbols.resolve(library->free_async, "cudaFreeAsync");
  if (!symbols.missing().empty()) {
    probe.problem = "the CUDA runtime at " + found.path + " (" + found.found_by + ") lacks " +
                    symbols.missing_list() +
                    "; point RUNRUN_CUDART_LIBRARY at a libcudart.so of CUDA 11.2 or later";
    return probe;
  }
  if (library->runtime_get_version(&library->version) != cuda_abi::kSuccess) {
    library->version = 0;
  }
  probe.library = library.release();  // kept for the process, as the library itself
  return probe;
}

const LibrarySpec& cuda_runtime_spec() {
  static const LibrarySpec spec{
      "the CUDA runtime (libcudart)",
      env::kCudartLibrary,
      "libcudart.so",
      {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"},
      "Install a CUDA build of your framework (its nvidia-cuda-runtime wheel is found once the "
      "framework is imported), put libcudart.so on LD_LIBRARY_PATH, or set "
      "RUNRUN_CUDART_LIBRARY to its path."};
  return spec;
}

const CudaRuntimeProbe& probe_cuda_runtime() {
  static const CudaRuntimeProbe probe = open_cuda_runtime(cuda_runtime_spec());
  return probe;
}

const CudaRuntimeLibrary& cuda_runtime() {
  const CudaRuntimeProbe& probe = probe_cuda_runtime();
  if (probe.library == nullptr) throw UnsupportedError(RUNRUN_WHERE, probe.problem);
  return *probe.library;
}

std::string CudaRuntimeLibrary::error_text(cuda_abi::Error error) const {
  const char* text = get_error_string != nullptr ? get_error_string(error) : nullptr;
  return "CUDA error " + std::to_string(error) + (text != nullptr ? std::string(": ") + text : "");
}

std::string cuda_version_string(int version) {
  if (version <= 0) return "unknown version";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace runrun::gpu
