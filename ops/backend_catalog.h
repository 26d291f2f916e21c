#pragma once
// Why: "what can this build really run?" has one answer, here, next to the backends: the
// factory (backend_factory.cc), the C API's runrun_get_build_info (and so Python's *_built()),
// and `runrun --check-build` all read it. CMake's RUNRUN_HAVE_GLOO/NCCL/CUDA only say that a
// library was found on the build machine; a backend counts once ops/ implements it and it is
// compiled in. backend_factory_test checks that make_backend agrees with this table, so adding
// a backend to the factory without listing it here (or the reverse) fails a test.
// Header-only and free of any backend's headers, so the launcher can read it without linking
// a transport. Thread-safety: constants.

#include "runrun/build_config.h"

namespace runrun {

struct BuiltBackends {
  bool mpi;           // ops/mpi: the process backend over Open MPI
  bool gloo;          // ops/gloo: over Gloo's tcp transport, in jobs of `runrun --gloo`
  // ops/nccl: the data backend of CUDA tensors (always built: libnccl is loaded at run time,
  // docs/gpu.md). Not a controller: make_backend has no "nccl"; the core picks it per bucket.
  bool nccl;
  bool local;         // ops/local: in-process ranks (always built)
  // CUDA tensors: over NCCL, or staged through host memory over any controller (always built;
  // libcudart is loaded at run time).
  bool cuda_tensors;
};

inline constexpr BuiltBackends kBuiltBackends{RUNRUN_HAVE_MPI != 0, RUNRUN_HAVE_GLOO != 0, true,
                                              true, true};

}  // namespace runrun
