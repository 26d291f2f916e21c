// runrun_shm_study: the shared-memory allreduce alone (ops/shm, no runtime, no negotiation)
// against MPI_Allreduce on the same buffers in the same processes, blocks alternating, so the
// data path can be compared with MPI's without the runtime's per-op costs. Also the slot
// algorithm against the single-copy one (both groups connected side by side).
// Usage: mpirun -np N --bind-to none runrun_shm_study [--sizes 4,65536,1048576] [--blocks 30]
// Prints one line per size: medians (min) in us of the default shm group (single copy where
// shm_collectives.h uses it), the slot-only one and MPI.
// A study, not a test: it asserts the results match and nothing about time.

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "ops/shm/shm_collectives.h"
#include "ops/shm/shm_group.h"
#include "tests/unit/ops/shm_file_board.h"

namespace shm = runrun::shm;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<size_t> parse_sizes(const std::string& text) {
  std::vector<size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) sizes.push_back(std::stoull(item));
  return sizes;
}

std::unique_ptr<shm::Group> connect(runrun::testing::FileBoard& board, const char* key,
                                    bool single_copy) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  shm::GroupOptions options;
  options.single_copy = single_copy;
  std::string why;
  auto group = shm::Group::connect(board, key, rank, size, options, &why);
  if (!group) {
    std::fprintf(stderr, "no shared-memory group: %s\n", why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return group;
}

// The slowest rank's time per call of `batch` calls, in us.
template <typename Body>
double timed_block(int batch, Body&& body) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int i = 0; i < batch; ++i) body();
  double mine = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / batch;
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string sizes_text = "4,65536,1048576,16777216";
  int blocks = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--sizes") sizes_text = argv[i + 1];
    if (std::string(argv[i]) == "--blocks") blocks = std::atoi(argv[i + 1]);
  }
  char folder[64] = "/tmp/runrun-shm-study-XXXXXX";
  if (rank == 0 && mkdtemp(folder) == nullptr) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Bcast(folder, sizeof(folder), MPI_CHAR, 0, MPI_COMM_WORLD);
  runrun::testing::FileBoard board(folder);
  auto single = connect(board, "single", true);
  auto slots = connect(board, "slots", false);
  if (rank == 0) {
    std::printf(
        "ranks %d, single-copy %s%s; us per allreduce (float32 min, in place), median "
        "(min) of %d blocks\n",
        single->size(), single->single_copy() ? "permitted" : "REFUSED",
        single->size() < shm::kSingleCopyMinRanks ? " (not used below 3 ranks: both columns "
                                                    "run the slot algorithm)"
                                                  : "",
        blocks);
  }
  for (const size_t bytes : parse_sizes(sizes_text)) {
    const size_t count = std::max<size_t>(1, bytes / sizeof(float));
    std::vector<float> data(count, 1.0f);
    const int batch = bytes <= 65536 ? 50 : 1;
    std::vector<double> a, b, c;
    for (int k = 0; k < blocks + 3; ++k) {
      const double x = timed_block(batch, [&] {
        shm::allreduce(*single, data.data(), count, runrun::DataType::kFloat32,
                       runrun::ReduceOp::kMin);
      });
      const double y = timed_block(batch, [&] {
        shm::allreduce(*slots, data.data(), count, runrun::DataType::kFloat32,
                       runrun::ReduceOp::kMin);
      });
      const double z = timed_block(batch, [&] {
        MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(count), MPI_FLOAT, MPI_MIN,
                      MPI_COMM_WORLD);
      });
      if (k >= 3) {
        a.push_back(x);
        b.push_back(y);
        c.push_back(z);
      }
    }
    if (data[count - 1] != 1.0f) {
      std::fprintf(stderr, "rank %d: wrong result %f\n", rank,
                   static_cast<double>(data[count - 1]));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
      std::printf("%10zu B: single-copy %8.1f (%7.1f)  slots %8.1f (%7.1f)  mpi %8.1f (%7.1f)\n",
                  bytes, median(a), *std::min_element(a.begin(), a.end()), median(b),
                  *std::min_element(b.begin(), b.end()), median(c),
                  *std::min_element(c.begin(), c.end()));
    }
  }
  single.reset();
  slots.reset();
  if (rank == 0) std::system(("rm -rf " + std::string(folder)).c_str());
  MPI_Finalize();
  return 0;
}
