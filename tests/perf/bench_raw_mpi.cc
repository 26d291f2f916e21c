#include <mpi.h>

#include <climits>

#include "common/errors.h"
#include "tests/perf/bench_raw.h"

namespace runrun::perf {
namespace {

int mpi_count(size_t count) {
  RUNRUN_ENFORCE(count <= static_cast<size_t>(INT_MAX), InvalidArgumentError,
                 "raw MPI call: " + std::to_string(count) +
                     " elements exceed MPI's int count; choose sizes below 8 GiB");
  return static_cast<int>(count);
}

class MpiRaw final : public RawComm {
 public:
  MpiRaw() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  double max(double value) override {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
  void allreduce_sum(float* data, size_t count) override {
    MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  void broadcast(float* data, size_t count, int root) override {
    MPI_Bcast(data, mpi_count(count), MPI_FLOAT, root, MPI_COMM_WORLD);
  }
  void allgather(const float* in, float* out, size_t per_rank) override {
    const int n = mpi_count(per_rank);
    MPI_Allgather(in, n, MPI_FLOAT, out, n, MPI_FLOAT, MPI_COMM_WORLD);
  }
  void reducescatter_sum(const float* in, float* out, size_t per_rank) override {
    MPI_Reduce_scatter_block(in, out, mpi_count(per_rank), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  void alltoall(const float* in, float* out, size_t block) override {
    const int n = mpi_count(block);
    MPI_Alltoall(in, n, MPI_FLOAT, out, n, MPI_FLOAT, MPI_COMM_WORLD);
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<RawComm> make_mpi_raw() { return std::make_unique<MpiRaw>(); }

}  // namespace runrun::perf
