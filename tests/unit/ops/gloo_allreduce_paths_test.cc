// The gloo allreduce's three paths (ops/gloo/gloo_collectives.cc) give exact results: one step
// (small buffers), two steps with one segment per chunk, and two steps with several segments
// per chunk (each on its own lane, reduced as it arrives), with chunks of unequal length, back
// to back with growing and shrinking sizes (the kept scratch memory), float32 and int32.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.h"
#include "tests/unit/ops/gloo_ranks.h"

using runrun::Backend;
using runrun::DataType;
using runrun::ReduceOp;

namespace {

// Element i of rank r: small integers, so float32 sums are exact in any order.
template <typename T>
std::vector<T> pattern(size_t count, int rank) {
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = static_cast<T>(rank * 100 + static_cast<int>(i % 97));
  }
  return values;
}

template <typename T>
void check_allreduce(Backend& backend, size_t count, DataType type) {
  auto data = pattern<T>(count, backend.rank());
  backend.allreduce(data.data(), data.data(), count, type, ReduceOp::kSum);
  const int n = backend.size();
  for (size_t i = 0; i < count; ++i) {
    const T want = static_cast<T>(100 * n * (n - 1) / 2 + n * static_cast<int>(i % 97));
    if (data[i] != want) {  // thrown, not FAIL: this runs on a rank's thread
      throw runrun::InternalError(
          RUNRUN_WHERE, "rank " + std::to_string(backend.rank()) + ", " + std::to_string(count) +
                            " elements: element " + std::to_string(i) + " is " +
                            std::to_string(data[i]) + ", expected " + std::to_string(want));
    }
  }
}

}  // namespace

TEST_CASE("gloo allreduce: one-step, one-segment and segmented paths give exact sums") {
  for (int ranks : {2, 3}) {
    INFO(ranks << " ranks");
    runrun::testing::run_gloo_ranks(ranks, [](Backend& backend) {
      // 4 B .. 16 KiB: one step; 64 KiB + 12 B: two steps, one segment; ~6 MiB + 28 B: two
      // steps, several segments per chunk (about 1 MiB each) and unequal chunks; then small again.
      for (size_t count : {size_t{1}, size_t{7}, size_t{4096}, size_t{16387},
                           size_t{3} * (size_t{1} << 19) + 7, size_t{5}, size_t{16387}}) {
        check_allreduce<float>(backend, count, DataType::kFloat32);
        check_allreduce<int32_t>(backend, count, DataType::kInt32);
      }
    });
  }
}

TEST_CASE(
    "gloo allreduce: beyond 4 ranks recursive doubling and halving-doubling give exact sums") {
  // Over TCP (RUNRUN_GLOO_SHM=0, the ops.gloo.tcp.* runs) auto picks recursive doubling up to
  // 64 KiB and halving-doubling above (ops/algorithms/algorithm_choice.h); 5 and 6 ranks fold
  // into a group of 4, 8 is a power of two.
  for (int ranks : {5, 6, 8}) {
    INFO(ranks << " ranks");
    runrun::testing::run_gloo_ranks(ranks, [](Backend& backend) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{16384}, size_t{16385},
                           size_t{(size_t{1} << 20) + 3}, size_t{2}}) {
        check_allreduce<float>(backend, count, DataType::kFloat32);
        check_allreduce<int32_t>(backend, count, DataType::kInt32);
      }
    });
  }
}
