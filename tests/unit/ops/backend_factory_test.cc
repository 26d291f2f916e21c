// make_backend: names it knows, names it does not, and what it says about them.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/errors.h"
#include "ops/backend_catalog.h"
#include "ops/backend_factory.h"
#include "runrun/build_config.h"

TEST_CASE(
    "make_backend: gloo outside a launcher job says how to start one; unknown names list "
    "the built backends") {
  runrun::BackendOptions options;
  options.name = "gloo";
  ::unsetenv("RUNRUN_RANK");
  if (RUNRUN_HAVE_GLOO) {
    CHECK_THROWS_AS(runrun::make_backend(options), runrun::InvalidArgumentError);
    CHECK_THROWS_WITH(runrun::make_backend(options), Catch::Contains("RUNRUN_RANK is not set") &&
                                                         Catch::Contains("runrun --gloo"));
  } else {
    CHECK_THROWS_AS(runrun::make_backend(options), runrun::UnsupportedError);
    CHECK_THROWS_WITH(runrun::make_backend(options),
                      Catch::Contains("libgloo-dev") && Catch::Contains("use mpi"));
  }
  options.name = "carrier-pigeon";
  CHECK_THROWS_AS(runrun::make_backend(options), runrun::UnsupportedError);
  CHECK_THROWS_WITH(runrun::make_backend(options),
                    Catch::Contains("carrier-pigeon") && Catch::Contains("local"));
}

TEST_CASE("make_backend: local gives a one-rank backend that works") {
  runrun::BackendOptions options;
  options.name = "local";
  auto backend = runrun::make_backend(options);
  REQUIRE(backend);
  CHECK(backend->name() == "local");
  CHECK(backend->size() == 1);
  float value = 3;
  backend->allreduce(&value, &value, 1, runrun::DataType::kFloat32, runrun::ReduceOp::kSum);
  CHECK(value == 3);
}

TEST_CASE("built_backends names what this build has and threads_multiple initializes nothing") {
  const auto names = runrun::built_backends();
  const bool has_mpi = std::find(names.begin(), names.end(), "mpi") != names.end();
  CHECK(has_mpi == static_cast<bool>(RUNRUN_HAVE_MPI));
  // Nothing in this process initialized MPI, so no thread level has been granted.
  CHECK_FALSE(runrun::threads_multiple("mpi"));
  CHECK_FALSE(runrun::threads_multiple("gloo"));  // no such notion
  CHECK_FALSE(runrun::threads_multiple("carrier-pigeon"));
}

TEST_CASE("the backend catalog (what --check-build and *_built() report) matches the factory") {
  // A backend the catalog does not list must be one make_backend cannot create, and the
  // reverse. NCCL and CUDA are the exceptions: built, but data paths the core picks for CUDA
  // tensors, not factory names.
  using runrun::backend_built;
  const auto creatable = [](const char* name) {
    runrun::BackendOptions options;
    options.name = name;
    try {
      return runrun::make_backend(options) != nullptr;
    } catch (const runrun::UnsupportedError&) {
      return false;  // not built
    } catch (const runrun::InvalidArgumentError&) {
      return true;  // built; needs a launcher's job to connect (gloo)
    }
  };
  CHECK(creatable("gloo") == backend_built("gloo"));
  CHECK(backend_built("nccl"));    // the data backend of CUDA tensors, loaded at run time...
  CHECK_FALSE(creatable("nccl"));  // ...which is no controller: never a make_backend name
  CHECK(backend_built("local"));
  CHECK(creatable("local"));
  CHECK(backend_built("mpi") == static_cast<bool>(RUNRUN_HAVE_MPI));  // creating it inits MPI
  CHECK(backend_built("cuda"));  // over NCCL or staged (core/execution/device_collectives.h)
  CHECK_FALSE(backend_built("carrier-pigeon"));
  // The catalog's controllers are make_backend's names, in the same order, each listed once.
  const auto names = runrun::built_backends();
  std::vector<std::string> listed, controllers;
  for (const runrun::BuiltBackend& backend : runrun::built_backend_catalog()) {
    listed.emplace_back(backend.name);
    if (backend.controller) controllers.emplace_back(backend.name);
  }
  for (const auto& name : listed) CHECK(std::count(listed.begin(), listed.end(), name) == 1);
  CHECK(controllers == names);
  CHECK(std::count(names.begin(), names.end(), "nccl") == 0);
}
