#include <catch2/catch.hpp>

#include "launcher/check_build.h"
#include "runrun/build_config.h"

using namespace runrun::launcher;

TEST_CASE("option --check-build table") {
  BuildFeatures features;
  features.frameworks = {{"TensorFlow", false, "ModuleNotFoundError: No module named 'tensorflow'"},
                         {"PyTorch", true, "2.13.0+cpu"}};
  features.python = "/opt/venv/bin/python3";
  features.mpi = true;
  features.cuda = false;
  CHECK(format_check_build(features, "1.2.3") ==
        "runrun v1.2.3:\n\n"
        "Available Frameworks:\n"
        "    [ ] TensorFlow (ModuleNotFoundError: No module named 'tensorflow')\n"
        "    [X] PyTorch (2.13.0+cpu)\n"
        "    (as /opt/venv/bin/python3 imports runrun.tensorflow, runrun.torch, runrun.jax, "
        "runrun.keras)\n\n"
        "Available Controllers:\n    [X] MPI\n    [ ] Gloo\n\n"
        "Available Tensor Operations:\n    [ ] NCCL\n    [X] MPI\n    [ ] Gloo\n    [ ] CUDA\n");
  features.python.clear();
  CHECK_THAT(format_check_build(features, "1.2.3"),
             Catch::Contains("    (no python3 on the PATH to import runrun.tensorflow, "));
}

// One detection (it imports every framework in python3: seconds), every check of it.
TEST_CASE("check-build's detection on this machine") {
  const BuildFeatures features = detect_build_features();

  // Frameworks: the suite's python3 has every one (make test installs them); each row carries
  // the version the framework reports.
  REQUIRE(features.frameworks.size() == 4);
  const char* names[] = {"TensorFlow", "PyTorch", "JAX", "Keras"};
  for (size_t i = 0; i < 4; ++i) {
    INFO(features.frameworks[i].name << ": " << features.frameworks[i].detail);
    CHECK(features.frameworks[i].name == names[i]);
    CHECK(features.frameworks[i].available);
    CHECK_FALSE(features.frameworks[i].detail.empty());
    CHECK(features.frameworks[i].detail.find(' ') ==
          (i == 3 ? features.frameworks[i].detail.find(" on ") : std::string::npos));
  }
  CHECK_FALSE(features.python.empty());

  // Only backends that are implemented, not libraries CMake found: ops/ implements MPI and Gloo
  // (built with the libraries); NCCL and CUDA tensors are always built, their libraries loaded
  // at run time (docs/gpu.md), whatever CMake found.
  CHECK(features.mpi == static_cast<bool>(RUNRUN_HAVE_MPI));
  CHECK(features.gloo == static_cast<bool>(RUNRUN_HAVE_GLOO));
  CHECK(features.nccl);
  CHECK(features.cuda);

  // The real search for the GPU libraries always has an answer: a library found, or where it
  // looked.
  CHECK_FALSE(features.cuda_runtime_library.empty());
  CHECK_FALSE(features.nccl_library.empty());
}

TEST_CASE("check-build's NCCL and CUDA rows: available at run time, and what was found") {
  BuildFeatures features;
  features.nccl = features.cuda = true;
  features.nccl_found = true;
  features.nccl_library = "NCCL 2.23.4 at /opt/libnccl.so.2 (found by the dynamic linker)";
  features.cuda_runtime_library = "the CUDA runtime (libcudart) was not found; looked at:\n  - x";
  const std::string out = format_check_build(features, "1.2.3");
  CHECK(out.find("    [X] NCCL (available at run time: NCCL 2.23.4 at /opt/libnccl.so.2 (found by "
                 "the dynamic linker))\n") != std::string::npos);
  CHECK(out.find("    [X] CUDA (available at run time; not found by this process, see below)\n") !=
        std::string::npos);
}

TEST_CASE("check-build says what the run-time search for the GPU libraries found") {
  BuildFeatures features;
  features.cuda_runtime_library = "the CUDA runtime (libcudart) was not found; looked at:\n  - x";
  features.nccl_library = "NCCL 2.32.3 at /opt/libnccl.so.2 (found by the dynamic linker)";
  const std::string out = format_check_build(features, "1.2.3");
  CHECK(out.find("\nGPU libraries, loaded at run time") != std::string::npos);
  CHECK(out.find("    the CUDA runtime (libcudart) was not found; looked at:\n        - x\n") !=
        std::string::npos);
  CHECK(out.find("    NCCL 2.32.3 at /opt/libnccl.so.2 (found by the dynamic linker)\n") !=
        std::string::npos);
}
