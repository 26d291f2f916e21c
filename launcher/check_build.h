#pragma once
// Why: `runrun --check-build` answers "what did this build include?" the way Horovod's does:
// frameworks, controllers and tensor operations, each [X] or [ ]. A controller or tensor
// operation is checked only when it is implemented and built (ops/backend_catalog.h), never
// because CMake merely found a library. The GPU libraries, which runrun loads at run time rather
// than links, are reported as this machine would load them (ops/cuda/library_search.h).
// Thread-safety: pure formatting; detect_build_features runs Python subprocesses (one per
// framework, at once) and searches for the GPU libraries (dlopen) in this process.

#include <string>
#include <vector>

namespace runrun::launcher {

// One framework adapter as `python3` on the PATH imports it: nothing is compiled against a
// framework, so a framework is available wherever its adapter imports.
struct FrameworkFound {
  std::string name;  // "TensorFlow", "PyTorch", "JAX", "Keras"
  bool available = false;
  std::string detail;  // its version ("2.21.0"), or why not ("ModuleNotFoundError: ...")
};

struct BuildFeatures {
  std::vector<FrameworkFound> frameworks;  // in the table's order
  std::string python;                      // the python3 that imported them ("" if none)
  bool mpi = false, gloo = false, nccl = false;
  bool cuda = false;  // collectives on GPU tensors
  // One line each: what the run-time search found ("NCCL 2.32.3 at PATH (found by the dynamic
  // linker)") or why not (every place looked at).
  std::string cuda_runtime_library;
  std::string nccl_library;
  bool cuda_runtime_found = false, nccl_found = false;  // whether those texts name a library
};

// The backends of ops/backend_catalog.h, plus the frameworks detected with `python3`.
BuildFeatures detect_build_features();

// The table, e.g.
//   runrun v0.1.0:
//
//   Available Frameworks:
//       [X] TensorFlow (2.21.0)
//       [X] PyTorch (2.13.0+cpu)
//       [ ] JAX (ModuleNotFoundError: No module named 'jax')
//       [X] Keras (3.15.1 on tensorflow)
//       (as /usr/bin/python3 imports runrun.tensorflow, runrun.torch, runrun.jax, runrun.keras)
//   ...
std::string format_check_build(const BuildFeatures& features, const std::string& version);

}  // namespace runrun::launcher
