#pragma once
// Why: `runrun --check-build` answers "what did this build include?" the way Horovod's does:
// frameworks, controllers and tensor operations, each [X] or [ ]. A controller or tensor
// operation is checked only when it is implemented and built (ops/backend_catalog.h), never
// because CMake merely found a library.
// Thread-safety: pure formatting; detect_frameworks runs a Python subprocess.

#include <string>

namespace runrun::launcher {

struct BuildFeatures {
  bool pytorch = false;  // `import runrun.torch` works with python3
  bool mpi = false, gloo = false, nccl = false;
  bool cuda = false;  // collectives on GPU tensors
};

// The backends of ops/backend_catalog.h, plus the frameworks detected with `python3`.
BuildFeatures detect_build_features();

// The table, e.g.
//   runrun v0.1.0:
//
//   Available Frameworks:
//       [X] PyTorch
//   ...
std::string format_check_build(const BuildFeatures& features, const std::string& version);

}  // namespace runrun::launcher
