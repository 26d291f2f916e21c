#pragma once
// Why: `runrun --check-build` answers "what did this build include?" the way Horovod's does:
// frameworks, controllers and tensor operations, each [X] or [ ].
// Thread-safety: pure formatting; detect_frameworks runs a Python subprocess.

#include <string>

namespace runrun::launcher {

struct BuildFeatures {
  bool pytorch = false;  // `import runrun.torch` works with python3
  bool mpi = false, gloo = false, nccl = false, cuda = false;
};

// What runrun/build_config.h records, plus the frameworks detected with `python3`.
BuildFeatures detect_build_features();

// The table, e.g.
//   runrun v0.1.0:
//
//   Available Frameworks:
//       [X] PyTorch
//   ...
std::string format_check_build(const BuildFeatures& features, const std::string& version);

}  // namespace runrun::launcher
