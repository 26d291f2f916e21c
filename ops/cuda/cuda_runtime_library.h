#pragma once
// Why: the CUDA runtime entry points runrun uses (devices, streams, events, copies), from the
// libcudart found at run time (library_search.h: RUNRUN_CUDART_LIBRARY, the copy the framework
// loaded, the dynamic linker). Nothing GPU is linked into runrun, so this is the one place that
// knows whether this process can touch GPU memory, and why not.
// Thread-safety: cuda_runtime() searches and opens once per process (thread-safe static); the
// table it returns is immutable and its functions are the CUDA runtime's own (thread-safe).

#include <string>

#include "ops/cuda/cuda_abi.h"
#include "ops/cuda/library_search.h"

namespace runrun::gpu {

struct CudaRuntimeLibrary {
  std::string path;      // the file opened
  std::string found_by;  // how (library_search.h)
  int version = 0;       // cudaRuntimeGetVersion: 1000 * major + 10 * minor

  cuda_abi::RuntimeGetVersion runtime_get_version = nullptr;
  cuda_abi::DriverGetVersion driver_get_version = nullptr;
  cuda_abi::GetDeviceCount get_device_count = nullptr;
  cuda_abi::GetDevice get_device = nullptr;
  cuda_abi::SetDevice set_device = nullptr;
  cuda_abi::GetErrorString get_error_string = nullptr;
  cuda_abi::StreamCreateWithFlags stream_create_with_flags = nullptr;
  cuda_abi::StreamDestroy stream_destroy = nullptr;
  cuda_abi::StreamWaitEvent stream_wait_event = nullptr;
  cuda_abi::EventCreateWithFlags event_create_with_flags = nullptr;
  cuda_abi::EventDestroy event_destroy = nullptr;
  cuda_abi::EventRecord event_record = nullptr;
  cuda_abi::EventQuery event_query = nullptr;
  cuda_abi::EventSynchronize event_synchronize = nullptr;
  cuda_abi::MemcpyAsync memcpy_async = nullptr;
  cuda_abi::MemsetAsync memset_async = nullptr;
  cuda_abi::Malloc malloc_device = nullptr;
  cuda_abi::Free free_device = nullptr;
  cuda_abi::MallocHost malloc_host = nullptr;
  cuda_abi::FreeHost free_host = nullptr;
  cuda_abi::MallocAsync malloc_async = nullptr;
  cuda_abi::FreeAsync free_async = nullptr;

  // "cudaErrorNoDevice (100): no CUDA-capable device is detected", for messages.
  std::string error_text(cuda_abi::Error error) const;
};

// What the search of this process found, without throwing: `library` is null when nothing
// usable was found and `problem` says what was looked for where and what to do.
struct CudaRuntimeProbe {
  const CudaRuntimeLibrary* library = nullptr;
  std::string problem;
};

const LibrarySpec& cuda_runtime_spec();
// This process's search, done once (later calls return the first outcome).
const CudaRuntimeProbe& probe_cuda_runtime();
// A search of its own by `spec` (tests; the library table of a success lives for the process).
CudaRuntimeProbe open_cuda_runtime(const LibrarySpec& spec);

// The loaded runtime; throws UnsupportedError with probe_cuda_runtime().problem otherwise.
const CudaRuntimeLibrary& cuda_runtime();

// "13.0" from 13000.
std::string cuda_version_string(int version);

}  // namespace runrun::gpu
