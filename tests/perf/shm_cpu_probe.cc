// runrun_shm_cpu_probe: what one shared-memory allreduce costs each rank in CPU time, which a
// loaded machine perturbs far less than wall time (docs/perf-notes/gloo.md, "1 MiB at -np 4").
// Forks N ranks (no MPI, no runtime); each connects a group for a negotiation-sized step and
// one for the data, then runs `iters` ops back to back (a 16-byte step, then an allreduce of
// `bytes` float32 min) and prints its wall time, CPU time and context switches per op.
// Usage: runrun_shm_cpu_probe RANKS BYTES ITERS [single-copy 0|1, default 1]
// A study, not a test: it asserts nothing about time.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "ops/shm/shm_collectives.h"
#include "ops/shm/shm_group.h"
#include "tests/unit/ops/shm_file_board.h"

namespace shm = runrun::shm;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int run_rank(const char* folder, int rank, int size, size_t bytes, int iters, bool single_copy) {
  runrun::testing::FileBoard board(folder);
  shm::GroupOptions options;
  options.single_copy = single_copy;
  std::string why;
  auto control = shm::Group::connect(board, "control", rank, size, options, &why);
  auto data = shm::Group::connect(board, "data", rank, size, options, &why);
  if (!control || !data) {
    std::fprintf(stderr, "rank %d: no group: %s\n", rank, why.c_str());
    return 1;
  }
  const size_t count = std::max<size_t>(1, bytes / sizeof(float));
  std::vector<float> buffer(count, 1.0f);
  const uint64_t bits[2] = {~uint64_t{0}, ~uint64_t{0}};
  const auto one_op = [&] {
    control->begin("negotiation");
    std::memcpy(control->my_slot(), bits, sizeof(bits));
    control->step();
    shm::allreduce(*data, buffer.data(), count, runrun::DataType::kFloat32, runrun::ReduceOp::kMin);
  };
  for (int i = 0; i < 20; ++i) one_op();
  rusage before{};
  rusage after{};
  getrusage(RUSAGE_SELF, &before);
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) one_op();
  const auto end = std::chrono::steady_clock::now();
  const double cpu = cpu_seconds() - cpu_start;
  getrusage(RUSAGE_SELF, &after);
  const double wall = std::chrono::duration<double>(end - start).count();
  std::printf(
      "rank %d: wall %.1f us/op, cpu %.1f us/op, voluntary switches %.2f/op, "
      "involuntary %.2f/op\n",
      rank, wall * 1e6 / iters, cpu * 1e6 / iters,
      static_cast<double>(after.ru_nvcsw - before.ru_nvcsw) / iters,
      static_cast<double>(after.ru_nivcsw - before.ru_nivcsw) / iters);
  std::fflush(stdout);
  return buffer[count - 1] == 1.0f ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s RANKS BYTES ITERS [single-copy 0|1]\n", argv[0]);
    return 2;
  }
  const int size = std::atoi(argv[1]);
  const size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const int iters = std::max(1, std::atoi(argv[3]));
  const bool single_copy = argc < 5 || std::atoi(argv[4]) != 0;
  char folder[] = "/tmp/runrun-shm-cpu-probe-XXXXXX";
  if (size < 1 || mkdtemp(folder) == nullptr) return 2;
  std::vector<pid_t> children;
  for (int rank = 0; rank < size; ++rank) {
    const pid_t child = fork();
    if (child == 0) _exit(run_rank(folder, rank, size, bytes, iters, single_copy));
    children.push_back(child);
  }
  int failed = 0;
  for (const pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  std::system(("rm -rf " + std::string(folder)).c_str());
  return failed == 0 ? 0 : 1;
}
