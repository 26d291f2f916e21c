#include "launcher/check_build.h"

#include "launcher/subprocess.h"
#include "runrun/build_config.h"

namespace runrun::launcher {
namespace {

std::string row(bool available, const char* name) {
  return std::string("    [") + (available ? "X" : " ") + "] " + name + "\n";
}

}  // namespace

BuildFeatures detect_build_features() {
  BuildFeatures features;
  features.mpi = RUNRUN_HAVE_MPI != 0;
  features.gloo = RUNRUN_HAVE_GLOO != 0;
  features.nccl = RUNRUN_HAVE_NCCL != 0;
  features.cuda = RUNRUN_HAVE_CUDA != 0;
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
