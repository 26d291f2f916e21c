#pragma once
// Why: what every benchmark case needs — the runtime under test, the communicator the raw MPI
// side uses (MPI_COMM_WORLD, driven from the main thread while the runtime's background thread
// uses its own duplicated communicators), the options and the reporter — plus the helpers that
// turn a failed handle or a wrong result into an exception naming the op, tensor and rank.
// Thread-safety: the main thread only.

#include <mpi.h>

#include <memory>
#include <string>

#include "core/handle.h"
#include "core/runtime.h"
#include "tests/perf/bench_options.h"
#include "tests/perf/bench_report.h"
#include "tests/perf/bench_timing.h"

namespace runrun::perf {

struct BenchContext {
  Runtime& runtime;
  MPI_Comm comm;
  int rank = 0;
  int size = 1;
  const BenchOptions& options;
  Reporter& reporter;

  TimingPlan plan(size_t bytes) const {
    return TimingPlan{options.warmup, options.iters, batch_for(bytes), options.budget_s};
  }
};

// Waits for `handle`; throws the op's own error (with `what` prepended) when it failed.
void wait_ok(const std::shared_ptr<Handle>& handle, const std::string& what);

// Throws InternalError naming the first element of data[0, n) that is not `want`.
void expect_all(const float* data, size_t n, float want, const std::string& what, int rank);

// Throws InvalidArgumentError when `count` elements do not fit MPI's int count.
int mpi_count(size_t count, const std::string& what);

}  // namespace runrun::perf
