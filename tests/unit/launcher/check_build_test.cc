#include <catch2/catch.hpp>

#include "launcher/check_build.h"
#include "runrun/build_config.h"

using namespace runrun::launcher;

TEST_CASE("option --check-build table") {
  BuildFeatures features;
  features.pytorch = true;
  features.mpi = true;
  features.cuda = false;
  CHECK(format_check_build(features, "1.2.3") ==
        "runrun v1.2.3:\n\n"
        "Available Frameworks:\n    [X] PyTorch\n\n"
        "Available Controllers:\n    [X] MPI\n    [ ] Gloo\n\n"
        "Available Tensor Operations:\n    [ ] NCCL\n    [X] MPI\n    [ ] Gloo\n    [ ] CUDA\n");
}

TEST_CASE("check-build reports only backends that are implemented, not libraries CMake found") {
  // ops/ implements MPI and Gloo (built with the libraries); no NCCL backend and no GPU tensor
  // path exist yet, whatever CMake found (a build machine with CUDA has RUNRUN_HAVE_CUDA=1).
  const BuildFeatures features = detect_build_features();
  CHECK(features.mpi == static_cast<bool>(RUNRUN_HAVE_MPI));
  CHECK(features.gloo == static_cast<bool>(RUNRUN_HAVE_GLOO));
  CHECK_FALSE(features.nccl);
  CHECK_FALSE(features.cuda);
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

  // The real search always has an answer: a library found, or where it looked.
  const BuildFeatures detected = detect_build_features();
  CHECK_FALSE(detected.cuda_runtime_library.empty());
  CHECK_FALSE(detected.nccl_library.empty());
}
