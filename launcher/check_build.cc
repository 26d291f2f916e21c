#include "launcher/check_build.h"

#include <cstdlib>

#include "launcher/processes/subprocess.h"
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

// The adapters, in Horovod's order (TensorFlow, PyTorch) and then ours, each with the Python
// that imports it and prints its framework's version after kVersionMark.
struct FrameworkProbe {
  const char* name;
  const char* module;
  const char* version_code;
};
constexpr FrameworkProbe kFrameworkProbes[] = {
    {"TensorFlow", "runrun.tensorflow", "import tensorflow as f; v = f.__version__"},
    {"PyTorch", "runrun.torch", "import torch as f; v = f.__version__"},
    {"JAX", "runrun.jax", "import jax as f; v = f.__version__"},
    {"Keras", "runrun.keras",
     "import keras as f; v = f.__version__ + ' on ' + f.backend.backend()"},
};
constexpr const char* kVersionMark = "runrun-check-build-version: ";
constexpr const char* kPythonMark = "runrun-check-build-python: ";
constexpr double kImportTimeoutS = 60;

// The rest of the line after `mark` in `output`, or "".
std::string marked(const std::string& output, const std::string& mark) {
  const size_t at = output.find(mark);
  if (at == std::string::npos) return "";
  const size_t begin = at + mark.size();
  return output.substr(begin, output.find('\n', begin) - begin);
}

std::string last_line(const std::string& output) {
  size_t end = output.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t begin = output.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  std::string line = output.substr(begin, end + 1 - begin);
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

// What a probe's run says: the version it printed, or why the import failed.
FrameworkFound framework_found(const FrameworkProbe& probe, const CapturedRun& run) {
  FrameworkFound found{probe.name, false, ""};
  const std::string version = marked(run.output, kVersionMark);
  if (run.started && !run.timed_out && run.exit_code == 0 && !version.empty()) {
    found.available = true;
    found.detail = version;
  } else if (!run.started) {
    found.detail = "python3 could not start: " + run.error;
  } else if (run.timed_out) {
    found.detail = "import " + std::string(probe.module) + " did not finish within " +
                   std::to_string(static_cast<int>(kImportTimeoutS)) + " s";
  } else if (run.signal != 0) {
    found.detail = "import " + std::string(probe.module) + " was killed by signal " +
                   std::to_string(run.signal);
  } else {
    found.detail = last_line(run.output);
    if (found.detail.empty()) {
      found.detail = "import " + std::string(probe.module) + " exited with code " +
                     std::to_string(run.exit_code);
    }
  }
  return found;
}

std::string framework_row(const FrameworkFound& framework) {
  std::string name = framework.name;
  if (!framework.detail.empty()) name += " (" + framework.detail + ")";
  return row(framework.available, name.c_str());
}

std::string indented(const std::string& text) {
  std::string out = "    ";
  for (char c : text) out += c == '\n' ? std::string("\n      ") : std::string(1, c);
  return out + "\n";
}

}  // namespace

BuildFeatures detect_build_features() {
  BuildFeatures features;
  features.mpi = backend_built("mpi");
  features.gloo = backend_built("gloo");
  features.nccl = backend_built("nccl");
  features.cuda = backend_built("cuda");
  std::vector<std::vector<std::string>> probes;
  for (const FrameworkProbe& probe : kFrameworkProbes) {
    // sys.path[0] is "" for -c: the current directory, whose folders could shadow packages.
    probes.push_back({"python3", "-c",
                      "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n"
                      "import " +
                          std::string(probe.module) + "\n" + probe.version_code + "\nprint('" +
                          kPythonMark + "' + sys.executable + '\\n" + kVersionMark +
                          "' + v, flush=True)"});
  }
  const auto runs = run_all_captured(probes, kImportTimeoutS);
  for (size_t i = 0; i < runs.size(); ++i) {
    features.frameworks.push_back(framework_found(kFrameworkProbes[i], runs[i]));
  }
  // The interpreter itself (sys.executable: not a pyenv shim), else python3 on the PATH.
  for (const CapturedRun& run : runs) {
    if (features.python.empty()) features.python = marked(run.output, kPythonMark);
  }
  if (features.python.empty()) {
    const char* path = std::getenv("PATH");
    features.python = find_executable("python3", path != nullptr ? path : "");
  }
  features.cuda_runtime_library = gpu_libraries_found().cuda_runtime_text;
  features.nccl_library = gpu_libraries_found().nccl_text;
  features.cuda_runtime_found = gpu_libraries_found().cuda_runtime;
  features.nccl_found = gpu_libraries_found().nccl;
  return features;
}

std::string format_check_build(const BuildFeatures& features, const std::string& version) {
  std::string out = "runrun v" + version + ":\n\n";
  out += "Available Frameworks:\n";
  std::string modules;
  for (const FrameworkFound& framework : features.frameworks) out += framework_row(framework);
  for (const FrameworkProbe& probe : kFrameworkProbes) {
    modules += (modules.empty() ? "" : ", ") + std::string(probe.module);
  }
  out += features.python.empty() ? "    (no python3 on the PATH to import " + modules + ")\n"
                                 : "    (as " + features.python + " imports " + modules + ")\n";
  out += "\nAvailable Controllers:\n" + row(features.mpi, "MPI") + row(features.gloo, "Gloo");
  out += "\nAvailable Tensor Operations:\n" +
         run_time_row(features.nccl, "NCCL", features.nccl_found, features.nccl_library) +
         row(features.mpi, "MPI") + row(features.gloo, "Gloo") +
         run_time_row(features.cuda, "CUDA", features.cuda_runtime_found,
                      features.cuda_runtime_library);
  if (!features.cuda_runtime_library.empty() || !features.nccl_library.empty()) {
    out +=
        "\nGPU libraries, loaded at run time (as this process finds them; a rank also finds "
        "the copies its framework loaded; docs/gpu.md):\n";
    out += indented(features.cuda_runtime_library) + indented(features.nccl_library);
  }
  return out;
}

}  // namespace runrun::launcher
