#include "launcher/check_build.h"

#include "launcher/subprocess.h"
#include "ops/backend_catalog.h"

namespace runrun::launcher {
namespace {

std::string row(bool available, const char* name) {
  return std::string("    [") + (available ? "X" : " ") + "] " + name + "\n";
}

}  // namespace

BuildFeatures detect_build_features() {
  BuildFeatures features;
  features.mpi = kBuiltBackends.mpi;
  features.gloo = kBuiltBackends.gloo;
  features.nccl = kBuiltBackends.nccl;
  features.cuda = kBuiltBackends.cuda_tensors;
  const auto runs = run_all_captured({{"python3", "-c", "import runrun.torch"}}, 60);
  features.pytorch = runs.front().started && !runs.front().timed_out &&
                     runs.front().exit_code == 0;
  return features;
}

std::string format_check_build(const BuildFeatures& features, const std::string& version) {
  std::string out = "runrun v" + version + ":\n\n";
  out += "Available Frameworks:\n" + row(features.pytorch, "PyTorch");
  out += "\nAvailable Controllers:\n" + row(features.mpi, "MPI") + row(features.gloo, "Gloo");
  out += "\nAvailable Tensor Operations:\n" + row(features.nccl, "NCCL") +
         row(features.mpi, "MPI") + row(features.gloo, "Gloo") + row(features.cuda, "CUDA");
  return out;
}

}  // namespace runrun::launcher
