#pragma once
// Why: GPU support is loaded at run time, never linked (ops/cuda/library_search.h); the core
// (when a CUDA tensor arrives) and `runrun --check-build` both say what this process finds, in
// the same words, without including a backend folder. Shared with launcher/ (as
// ops/backend_catalog.h is), so it includes nothing of the project.
// Thread-safety: gpu_libraries_found() searches once per process (thread-safe static); the
// answer is immutable.

#include <string>

namespace runrun {

struct GpuLibrariesFound {
  bool cuda_runtime = false;  // a usable libcudart was opened
  bool nccl = false;          // a usable libnccl (2.11 or later) was opened
  // "CUDA runtime 13.0 at PATH (found by the dynamic linker), 1 GPU(s)", or every place looked
  // at and what to do (several lines).
  std::string cuda_runtime_text;
  // "NCCL 2.32.3 at PATH (already loaded into this process)", or where it looked.
  std::string nccl_text;
};

const GpuLibrariesFound& gpu_libraries_found();

}  // namespace runrun
