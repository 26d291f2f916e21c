// The gloo allgather, broadcast, reducescatter and barrier beyond 4 ranks over TCP (the
// ops.gloo.tcp.* runs): auto picks Bruck's allgather, the binomial tree and recursive doubling
// up to 64 KiB, the ring and scatter-allgather above (ops/algorithms/algorithm_choice.h), the
// barrier is dissemination; 5 and 6 ranks are not powers of two, 8 is. Exact results, uneven
// and empty blocks, every root, in place and out of place, back to back with sizes that grow
// and shrink (the kept scratch memory). With shared memory on (ops.gloo.*) the same checks run
// over the shared segment.

#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "common/errors.h"
#include "ops/base/block_layout.h"
#include "tests/unit/ops/gloo_ranks.h"

using runrun::Backend;
using runrun::DataType;
using runrun::ReduceOp;

namespace {

// Thrown, not FAIL: the checks run on the ranks' threads.
void expect(bool ok, Backend& backend, const std::string& what) {
  if (!ok) {
    throw runrun::InternalError(RUNRUN_WHERE,
                                "rank " + std::to_string(backend.rank()) + ": " + what);
  }
}

char byte_of(int rank, size_t i) {
  return static_cast<char>((rank * 41 + static_cast<int>(i) * 7 + 1) & 0xff);
}

void check_allgatherv(Backend& backend, size_t scale) {
  const int n = backend.size();
  std::vector<size_t> bytes(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    bytes[static_cast<size_t>(r)] = r % 3 == 1 ? 0 : scale * static_cast<size_t>(r + 1) + 3;
  const auto offsets = runrun::offsets_of(bytes);
  const size_t total = std::accumulate(bytes.begin(), bytes.end(), size_t{0});
  const auto me = static_cast<size_t>(backend.rank());
  std::vector<char> mine(bytes[me]);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = byte_of(backend.rank(), i);
  std::vector<char> out(total);
  backend.allgatherv(mine.data(), mine.size(), out.data(), bytes);
  for (int p = 0; p < n; ++p) {
    for (size_t i = 0; i < bytes[static_cast<size_t>(p)]; ++i) {
      expect(out[offsets[static_cast<size_t>(p)] + i] == byte_of(p, i), backend,
             "allgatherv of " + std::to_string(total) + " bytes: byte " + std::to_string(i) +
                 " of rank " + std::to_string(p) + "'s block");
    }
  }
}

void check_broadcast(Backend& backend, size_t bytes, int root) {
  std::vector<char> buffer(bytes, '\0');
  if (backend.rank() == root) {
    for (size_t i = 0; i < bytes; ++i) buffer[i] = byte_of(root, i);
  }
  backend.broadcast(buffer.data(), bytes, root);
  for (size_t i = 0; i < bytes; ++i) {
    expect(buffer[i] == byte_of(root, i), backend,
           "broadcast of " + std::to_string(bytes) + " bytes from root " + std::to_string(root) +
               ": byte " + std::to_string(i));
  }
}

int32_t input_of(int rank, size_t i) {
  return (rank * 23 + static_cast<int32_t>(i % 101)) % 160 - 80;
}

void check_reducescatter(Backend& backend, size_t scale, bool in_place) {
  const int n = backend.size();
  std::vector<size_t> counts(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    counts[static_cast<size_t>(r)] = r % 4 == 2 ? 0 : scale + static_cast<size_t>(r);
  const auto offsets = runrun::offsets_of(counts);
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  const auto me = static_cast<size_t>(backend.rank());
  std::vector<int32_t> data(total);
  for (size_t i = 0; i < total; ++i) data[i] = input_of(backend.rank(), i);
  std::vector<int32_t> separate(counts[me] + 1);
  int32_t* out = in_place ? data.data() : separate.data();
  backend.reducescatter(data.data(), out, counts, DataType::kInt32, ReduceOp::kSum);
  for (size_t i = 0; i < counts[me]; ++i) {
    int32_t want = 0;
    for (int p = 0; p < n; ++p) want += input_of(p, offsets[me] + i);
    expect(out[i] == want, backend,
           "reducescatter of " + std::to_string(total) + " elements: element " + std::to_string(i) +
               " is " + std::to_string(out[i]) + ", expected " + std::to_string(want));
  }
}

}  // namespace

TEST_CASE(
    "gloo collectives beyond 4 ranks: allgatherv, broadcast, reducescatter and barrier are exact") {
  for (int ranks : {5, 6, 8}) {
    INFO(ranks << " ranks");
    runrun::testing::run_gloo_ranks(ranks, [](Backend& backend) {
      // Small (Bruck, tree, recursive doubling), large (ring, scatter-allgather), small again.
      for (size_t scale : {size_t{1}, size_t{100}, size_t{40000}, size_t{3}}) {
        check_allgatherv(backend, scale);
        check_reducescatter(backend, scale, false);
        check_reducescatter(backend, scale, true);
        backend.barrier();
      }
      for (size_t bytes : {size_t{1}, size_t{1000}, size_t{(size_t{1} << 20) + 5}, size_t{7}}) {
        for (int root : {0, backend.size() - 1, 3}) check_broadcast(backend, bytes, root);
      }
    });
  }
}
