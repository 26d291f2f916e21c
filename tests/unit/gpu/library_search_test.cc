// The run-time search for GPU libraries (ops/cuda/library_search.h) and the symbol tables of
// the CUDA runtime and NCCL, against fake libraries built next to this test
// (fake_gpu_library.cc) in RUNRUN_FAKE_GPU_DIR, which is also this executable's run path: a
// soname search by the dynamic linker finds them there.

#include <dlfcn.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "ops/cuda/cuda_runtime_library.h"
#include "ops/cuda/library_search.h"
#include "ops/nccl/nccl_library.h"

using namespace runrun::gpu;

namespace {

constexpr const char* kVariable = "RUNRUN_TEST_FAKE_GPU_LIBRARY";

std::string fake_path(const std::string& stem) {
  return std::string(RUNRUN_FAKE_GPU_DIR) + "/" + stem + ".so.2";
}

// A spec like the product's, for one fake library `stem` (libfakenccl_complete, ...).
LibrarySpec fake_spec(const std::string& stem) {
  return {"the fake library",
          kVariable,
          stem,
          {"libnot-there-runrun.so.2", stem + ".so.2"},
          "Install the fake library."};
}

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("without its variable, a library is found by soname through the dynamic linker") {
  ScopedVariable unset(kVariable, std::nullopt);
  const auto result = search_library(fake_spec("libfakenccl_complete"));
  REQUIRE(result.found());
  CHECK(result.found_by == "found by the dynamic linker");
  CHECK(result.path == fake_path("libfakenccl_complete"));
  // Every place looked at before is listed: the variable, the loaded libraries, the soname
  // that was not there.
  REQUIRE(result.attempts.size() == 3);
  CHECK(result.attempts[0] == std::string(kVariable) + ": not set");
  CHECK(contains(result.attempts[1], "already loaded into this process"));
  CHECK(contains(result.attempts[2], "libnot-there-runrun.so.2"));
}

TEST_CASE("the library named by the variable is used, even when another would be found") {
  ScopedVariable set(kVariable, fake_path("libfakenccl_old"));
  const auto result = search_library(fake_spec("libfakenccl_complete"));
  REQUIRE(result.found());
  CHECK(result.found_by == std::string("set by ") + kVariable);
  CHECK(result.path == fake_path("libfakenccl_old"));
}

TEST_CASE("a variable naming a missing file is an error, not a fallback to the search") {
  const std::string missing = std::string(RUNRUN_FAKE_GPU_DIR) + "/no-such-libnccl.so.2";
  ScopedVariable set(kVariable, missing);
  const LibrarySpec spec = fake_spec("libfakenccl_complete");
  const auto result = search_library(spec);
  CHECK_FALSE(result.found());
  const std::string message = describe_search_failure(spec, result);
  CHECK(contains(message, "the fake library was not found; looked at:"));
  CHECK(contains(message, std::string(kVariable) + "=" + missing + ": "));
  CHECK(contains(message, "No such file"));
  CHECK(contains(message, "Install the fake library."));
}

TEST_CASE("a copy already loaded into the process (the framework's) is preferred") {
  ScopedVariable unset(kVariable, std::nullopt);
  const std::string loaded = fake_path("libfakenccl_loaded");
  void* handle = dlopen(loaded.c_str(), RTLD_NOW | RTLD_GLOBAL);
  REQUIRE(handle != nullptr);
  LibrarySpec spec = fake_spec("libfakenccl_loaded");
  spec.sonames = {"libnot-there-runrun.so.2"};  // the linker would not find it
  const auto result = search_library(spec);
  REQUIRE(result.found());
  CHECK(result.found_by == "already loaded into this process");
  CHECK(result.path == loaded);
  CHECK(loaded_libraries_with_prefix("libfakenccl_loaded") == std::vector<std::string>{loaded});
}

TEST_CASE("when nothing is found, the message lists every place looked at and what to do") {
  ScopedVariable unset(kVariable, std::nullopt);
  LibrarySpec spec = fake_spec("libfake-absent");
  spec.sonames = {"libfake-absent.so.2", "libfake-absent.so"};
  const auto result = search_library(spec);
  CHECK_FALSE(result.found());
  const std::string message = describe_search_failure(spec, result);
  CHECK(message ==
        "the fake library was not found; looked at:\n"
        "  - RUNRUN_TEST_FAKE_GPU_LIBRARY: not set\n"
        "  - already loaded into this process (libfake-absent*): none\n"
        "  - the dynamic linker, libfake-absent.so.2: libfake-absent.so.2: cannot open shared "
        "object file: No such file or directory\n"
        "  - the dynamic linker, libfake-absent.so: libfake-absent.so: cannot open shared object "
        "file: No such file or directory\n"
        "Install the fake library.");
}

TEST_CASE("NCCL of a usable version gives a complete table") {
  ScopedVariable unset(kVariable, std::nullopt);
  const NcclProbe probe = open_nccl(fake_spec("libfakenccl_complete"));
  REQUIRE(probe.problem.empty());
  REQUIRE(probe.library != nullptr);
  CHECK(probe.library->version == 23203);
  CHECK(nccl_version_string(probe.library->version) == "2.32.3");
  CHECK(probe.library->red_op_create_pre_mul_sum != nullptr);
  CHECK(probe.library->error_text(3) == "NCCL error 3: fake NCCL error");
}

TEST_CASE("NCCL older than 2.11 is refused, naming its version, what it lacks and what to do") {
  ScopedVariable set(kVariable, fake_path("libfakenccl_old"));
  const NcclProbe probe = open_nccl(fake_spec("libfakenccl_old"));
  CHECK(probe.library == nullptr);
  CHECK(probe.problem ==
        "NCCL at " + fake_path("libfakenccl_old") +
            " (set by RUNRUN_TEST_FAKE_GPU_LIBRARY) is NCCL 2.8.3, which lacks "
            "ncclRedOpCreatePreMulSum, "
            "ncclRedOpDestroy; runrun needs NCCL 2.11 or later: install a newer nvidia-nccl "
            "wheel or libnccl2, or point RUNRUN_NCCL_LIBRARY at one");
}

TEST_CASE("the CUDA runtime's table, and a runtime that lacks entry points") {
  ScopedVariable unset(kVariable, std::nullopt);
  const CudaRuntimeProbe complete = open_cuda_runtime(fake_spec("libfakecudart_complete"));
  REQUIRE(complete.library != nullptr);
  CHECK(cuda_version_string(complete.library->version) == "13.0");
  int count = -1;
  CHECK(complete.library->get_device_count(&count) == 100);
  CHECK(complete.library->error_text(100) ==
        "CUDA error 100: fake: no CUDA-capable device is detected");

  const CudaRuntimeProbe partial = open_cuda_runtime(fake_spec("libfakecudart_partial"));
  CHECK(partial.library == nullptr);
  CHECK(contains(partial.problem, "lacks cudaMalloc, cudaFree, cudaMallocHost, cudaFreeHost"));
  CHECK(contains(partial.problem, "RUNRUN_CUDART_LIBRARY"));
}

TEST_CASE("the product searches for the libraries under their documented names") {
  CHECK(nccl_spec().env_var == "RUNRUN_NCCL_LIBRARY");
  CHECK(nccl_spec().loaded_prefix == "libnccl.so");
  CHECK(nccl_spec().sonames.front() == "libnccl.so.2");
  CHECK(cuda_runtime_spec().env_var == "RUNRUN_CUDART_LIBRARY");
  CHECK(cuda_runtime_spec().loaded_prefix == "libcudart.so");
  CHECK(cuda_runtime_spec().sonames.front() == "libcudart.so.13");
}

TEST_CASE("version strings of both encodings") {
  CHECK(nccl_version_string(23203) == "2.32.3");
  CHECK(nccl_version_string(21100) == "2.11.0");
  CHECK(nccl_version_string(2708) == "2.7.8");  // before 2.9: 1000 * major + 100 * minor
  CHECK(cuda_version_string(12040) == "12.4");
  CHECK(cuda_version_string(0) == "unknown version");
}
