// runrun_bench: collectives through the runrun runtime vs raw MPI, side by side in one run.
// Usage: mpirun -np 2 --bind-to none runrun_bench [--json] [--sizes 4,1K,1M] [--iters N] ...
// MPI is initialized here with MPI_THREAD_MULTIPLE before any runtime exists, so the runtime's
// mpi backend (background thread, duplicated communicators) and the raw calls (main thread,
// MPI_COMM_WORLD) share one MPI. Because the benchmark, not the runtime, initializes MPI, it
// applies the runtime's own MPI_Init-time setting first (libnbc iallreduce algorithm 3 unless
// the user chose one, as ops/mpi/mpi_lifetime.cc does), so the runtime is measured as users get
// it. Any failure aborts every rank (nothing may hang).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "core/config.h"
#include "core/runtime.h"
#include "ops/backend_factory.h"
#include "tests/perf/bench_collectives.h"
#include "tests/perf/bench_context.h"
#include "tests/perf/bench_many.h"
#include "tests/perf/bench_options.h"

namespace runrun::perf {
namespace {

std::string env_or_unset(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "unset";
}

// One runtime (with `threshold` as RUNRUN_FUSION_THRESHOLD when given) running every case.
void run_with_runtime(const BenchOptions& options, std::optional<size_t> threshold, int rank,
                      int size, Reporter& reporter) {
  std::map<std::string, std::string> overrides;
  if (threshold) overrides["RUNRUN_FUSION_THRESHOLD"] = std::to_string(*threshold);
  Config config = Config::load(overrides);
  BackendOptions backend;
  backend.name = "mpi";
  backend.collective_timeout = config.collective_timeout;
  Runtime runtime(make_backend(backend), config);
  reporter.run_info(RunInfo{size, config.fusion_threshold,
                            static_cast<long>(config.cycle_time.count()),
                            env_or_unset("OMPI_MCA_mpi_yield_when_idle"),
                            std::string(runtime.backend_name()),
                            env_or_unset("OMPI_MCA_coll_libnbc_iallreduce_algorithm"),
                            static_cast<long>(config.peer_timeout.count()),
                            !config.timeline_path.empty()});
  BenchContext ctx{runtime, MPI_COMM_WORLD, rank, size, options, reporter};
  for (const std::string& name : options.cases) {
    if (name == "many") {
      run_many_small(ctx);
    } else if (name == "resnet50") {
      run_resnet50(ctx);
    } else {
      run_collective_case(ctx, name);
    }
  }
  runtime.shutdown();
}

int run(int argc, char** argv) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  BenchOptions options;
  const int code = parse_options(argc, argv, rank == 0, options);
  if (code >= 0) return code;
  Reporter reporter(options.json, rank == 0);
  if (options.fusion_thresholds.empty()) {
    run_with_runtime(options, std::nullopt, rank, size, reporter);
  }
  for (size_t threshold : options.fusion_thresholds) {
    run_with_runtime(options, threshold, rank, size, reporter);
  }
  return 0;
}

}  // namespace
}  // namespace runrun::perf

int main(int argc, char** argv) {
  // Same as the runtime's own MPI initialization (ops/mpi/mpi_lifetime.cc); a user value wins.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", 0);
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "runrun_bench: MPI_Init_thread failed; run it under mpirun\n");
    return 1;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "runrun_bench rank %d: MPI gives thread level %d, not "
                         "MPI_THREAD_MULTIPLE; use an MPI built with thread support\n", rank, provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int code = 1;
  try {
    code = runrun::perf::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runrun_bench rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}
