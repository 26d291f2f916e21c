#include "launcher/check_build.h"

#include "launcher/subprocess.h"
#include "ops/backend_catalog.h"
#include "ops/gpu_libraries.h"

namespace runrun::launcher {
namespace {

std::string row(bool available, const char* name) {
  return std::string("    [") + (available ? "X" : " ") + "] " + name + "\n";
}

std::string indented(const std::string& text) {
  std::string out = "    ";
  for (char c : text) out += c == '\n' ? std::string("\n      ") : std::string(1, c);
  return out + "\n";
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
  features.cuda_runtime_library = gpu_libraries_found().cuda_runtime_text;
  features.nccl_library = gpu_libraries_found().nccl_text;
  return features;
}

std::string format_check_build(const BuildFeatures& features, const std::string& version) {
  std::string out = "runrun v" + version + ":\n\n";
  out += "Available Frameworks:\n" + row(features.pytorch, "PyTorch");
  out += "\nAvailable Controllers:\n" + row(features.mpi, "MPI") + row(features.gloo, "Gloo");
  out += "\nAvailable Tensor Operations:\n" + row(features.nccl, "NCCL") +
         row(features.mpi, "MPI") + row(features.gloo, "Gloo") + row(features.cuda, "CUDA");
  if (!features.cuda_runtime_library.empty() || !features.nccl_library.empty()) {
    out += "\nGPU libraries, loaded at run time (as this process finds them; a rank also finds "
           "the copies its framework loaded; docs/gpu.md):\n";
    out += indented(features.cuda_runtime_library) + indented(features.nccl_library);
  }
  return out;
}

}  // namespace runrun::launcher
