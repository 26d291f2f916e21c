#pragma once
// Why: "what can this build really run?" has one answer, here, next to the backends: the
// factory's tests, the C API's runrun_get_build_info (and so Python's *_built()) and
// `runrun --check-build` all read it. CMake's RUNRUN_HAVE_GLOO/NCCL/CUDA only say that a library
// was found on the build machine; a backend counts once its folder is compiled in, and each
// folder lists itself (runrun_add_backend in its CMakeLists.txt; ops/CMakeLists.txt generates
// the table, library runrun_backend_catalog), so adding a backend touches no list here.
// backend_factory_test checks that the controllers listed are exactly make_backend's providers.
// Free of any backend's headers, so the launcher can read it without linking a transport.
// Thread-safety: an immutable table.

#include <span>
#include <string_view>

namespace runrun {

struct BuiltBackend {
  // "local" (in-process ranks), "mpi" (over Open MPI), "gloo" (over Gloo's tcp transport, in
  // jobs of `runrun --gloo`), "nccl" (the data backend of CUDA tensors), "cuda" (collectives on
  // CUDA tensors: over NCCL, or staged through host memory over any controller).
  std::string_view name;
  // A controller: make_backend creates it by this name (its folder registers a provider). Else
  // a data path the core picks per tensor (nccl, cuda), never a make_backend name.
  bool controller;
};

// The backends this build compiled in, in registration order (ops/CMakeLists.txt).
std::span<const BuiltBackend> built_backend_catalog();

// Whether backend `name` is compiled in; false for a name runrun does not know.
inline bool backend_built(std::string_view name) {
  for (const BuiltBackend& backend : built_backend_catalog()) {
    if (backend.name == name) return true;
  }
  return false;
}

}  // namespace runrun
