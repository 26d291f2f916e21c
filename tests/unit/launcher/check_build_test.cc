#include <catch2/catch.hpp>

#include "launcher/check_build.h"

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
