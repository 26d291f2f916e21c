// Latency of small and large allreduces: raw blocking MPI_Allreduce versus MpiBackend (which
// posts MPI_Iallreduce and waits with spin-then-sleep). Prints numbers; asserts nothing.
// Run: mpirun -np 2 --bind-to none build/tests/integration/ops/mpi_latency_bench

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "ops/mpi/mpi_backend.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename Fn>
double median_us(int iterations, MPI_Comm comm, Fn&& fn) {
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(comm);
    const auto start = Clock::now();
    fn();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main() {
  runrun::mpi::MpiBackend backend;  // initializes MPI
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  for (size_t count : {size_t{1}, size_t{256}, size_t{1} << 20, size_t{1} << 24}) {
    std::vector<float> data(count, 1.0f);
    const int iterations = count >= (size_t{1} << 20) ? 20 : 2000;
    const int n = static_cast<int>(count);
    const double raw = median_us(iterations, comm, [&] {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, comm);
    });
    const double ours = median_us(iterations, comm, [&] {
      backend.allreduce(data.data(), data.data(), count, runrun::DataType::kFloat32,
                        runrun::ReduceOp::kSum);
    });
    if (backend.rank() == 0) {
      std::printf(
          "allreduce %10zu bytes: raw MPI_Allreduce %10.1f us, MpiBackend %10.1f us (np=%d)\n",
          count * sizeof(float), raw, ours, backend.size());
    }
  }
  MPI_Comm_free(&comm);
  return 0;
}
