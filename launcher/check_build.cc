#include "launcher/check_build.h"

#include "launcher/subprocess.h"
#include "ops/backend_catalog.h"
#include "ops/gpu_libraries.h"

namespace runrun::launcher {
namespace {

std::string row(bool available, const char* name) {
  return std::string("    [") + (available ? "X" : " ") + "] " + name + "\n";
}

// "[X] NCCL (available at run time: NCCL 2.23.4 at PATH (found by the dynamic linker))": the
// GPU rows say that the library is loaded at run time and what this process found.
std::string run_time_row(bool built, const char* name, bool found, const std::string& text) {
  if (!built) return row(false, name);
  std::string what = " (available at run time";
  if (found) {
    what += ": " + text.substr(0, text.find('\n'));
  } else if (!text.empty()) {
    what += "; not found by this process, see below";
  }
  return row(true, (std::string(name) + what + ")").c_str());
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
  features.cuda_runtime_found = gpu_libraries_found().cuda_runtime;
  features.nccl_found = gpu_libraries_found().nccl;
  return features;
}

std::string format_check_build(const BuildFeatures& features, const std::string& version) {
  std::string out = "runrun v" + version + ":\n\n";
  out += "Available Frameworks:\n" + row(features.pytorch, "PyTorch");
  out += "\nAvailable Controllers:\n" + row(features.mpi, "MPI") + row(features.gloo, "Gloo");
  out += "\nAvailable Tensor Operations:\n" +
         run_time_row(features.nccl, "NCCL", features.nccl_found, features.nccl_library) +
         row(features.mpi, "MPI") + row(features.gloo, "Gloo") +
         run_time_row(features.cuda, "CUDA", features.cuda_runtime_found,
                      features.cuda_runtime_library);
  if (!features.cuda_runtime_library.empty() || !features.nccl_library.empty()) {
    out += "\nGPU libraries, loaded at run time (as this process finds them; a rank also finds "
           "the copies its framework loaded; docs/gpu.md):\n";
    out += indented(features.cuda_runtime_library) + indented(features.nccl_library);
  }
  return out;
}

}  // namespace runrun::launcher
