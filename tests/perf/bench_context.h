#pragma once
// Why: what every benchmark case needs — the runtime under test, the raw side (bench_raw.h:
// MPI_COMM_WORLD or a gloo context of its own, driven from the main thread while the runtime's
// background thread uses its backend's own connections), the options and the reporter — plus
// the helpers that
// turn a failed handle or a wrong result into an exception naming the op, tensor and rank.
// Thread-safety: the main thread only.

#include <memory>
#include <string>

#include "core/runtime/handle.h"
#include "core/runtime/runtime.h"
#include "tests/perf/bench_options.h"
#include "tests/perf/bench_raw.h"
#include "tests/perf/bench_report.h"
#include "tests/perf/bench_timing.h"

namespace runrun::perf {

struct BenchContext {
  Runtime& runtime;
  RawComm& raw;
  int rank = 0;
  int size = 1;
  const BenchOptions& options;
  Reporter& reporter;

  TimingPlan plan(size_t bytes) const {
    return TimingPlan{options.warmup, options.iters, batch_for(bytes), options.budget_s,
                      options.shared_clock};
  }
};

// Waits for `handle`; throws the op's own error (with `what` prepended) when it failed.
void wait_ok(const std::shared_ptr<Handle>& handle, const std::string& what);

// Throws InternalError naming the first element of data[0, n) that is not `want`.
void expect_all(const float* data, size_t n, float want, const std::string& what, int rank);

}  // namespace runrun::perf
