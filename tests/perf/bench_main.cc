// runrun_bench: collectives through the runrun runtime vs the raw library, side by side in one
// run. Usage: mpirun -np 2 --bind-to none runrun_bench [--json] [--sizes 4,1K,1M] [--iters N]
// ..., or `runrun --gloo -np 2 runrun_bench ...`.
// MPI mode (not started by `runrun --gloo`): MPI is initialized here with MPI_THREAD_MULTIPLE
// before any runtime exists, so the runtime's mpi backend (background thread, duplicated
// communicators) and the raw calls (main thread, MPI_COMM_WORLD) share one MPI. Because the
// benchmark, not the runtime, initializes MPI, it applies the runtime's own MPI_Init-time
// setting first (libnbc iallreduce algorithm 3 unless the user chose one, as
// ops/mpi/mpi_lifetime.cc does), so the runtime is measured as users get it.
// Gloo mode (RUNRUN_CONTROLLER=gloo, set by `runrun --gloo`): MPI is never initialized; the
// runtime runs over the gloo backend and the raw side is gloo's algorithm library on a context
// of its own (bench_raw.h). Any failure aborts every rank (nothing may hang): MPI_Abort, or in
// gloo mode exit 1, after which the launcher stops the other ranks.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "core/runtime/config.h"
#include "common/env_names.h"
#include "core/runtime/runtime.h"
#include "ops/backend_factory.h"
#include "tests/perf/bench_collectives.h"
#include "tests/perf/bench_context.h"
#include "tests/perf/bench_gpu.h"
#include "tests/perf/bench_many.h"
#include "tests/perf/bench_options.h"
#include "tests/perf/bench_raw.h"

namespace runrun::perf {
namespace {

bool gloo_mode() {
  const char* controller = std::getenv(env::kController);
  return controller != nullptr && std::string(controller) == "gloo";
}

std::string env_or_unset(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "unset";
}

// One runtime (with `threshold` as RUNRUN_FUSION_THRESHOLD when given) running every case.
void run_with_runtime(const BenchOptions& options, std::optional<size_t> threshold, RawComm& raw,
                      Reporter& reporter) {
  std::map<std::string, std::string> overrides;
  if (threshold) overrides["RUNRUN_FUSION_THRESHOLD"] = std::to_string(*threshold);
  Config config = Config::load(overrides);
  BackendOptions backend;
  backend.name = raw.name();  // the runtime runs over the same library as the raw side
  backend.collective_timeout = config.collective_timeout;
  backend.hierarchical_allreduce = config.hierarchical_allreduce;  // as runrun_init does
  Runtime runtime(make_backend(backend), config);
  reporter.run_info(
      RunInfo{raw.size(), config.fusion_threshold, static_cast<long>(config.cycle_time.count()),
              env_or_unset("OMPI_MCA_mpi_yield_when_idle"), std::string(runtime.backend_name()),
              raw.name(), env_or_unset("OMPI_MCA_coll_libnbc_iallreduce_algorithm"),
              static_cast<long>(config.peer_timeout.count()), !config.timeline_path.empty()});
  BenchContext ctx{runtime, raw, raw.rank(), raw.size(), options, reporter};
  for (const std::string& name : options.cases) {
    if (name == "many") {
      run_many_small(ctx);
    } else if (name == "resnet50") {
      run_resnet50(ctx);
    } else if (name.rfind("cuda_", 0) == 0) {
      run_gpu_case(ctx, name);
    } else {
      run_collective_case(ctx, name);
    }
  }
  runtime.shutdown();
}

int run(int argc, char** argv, RawComm& raw) {
  BenchOptions options;
  const int code = parse_options(argc, argv, raw.rank() == 0, options);
  if (code >= 0) return code;
  Reporter reporter(options.json, raw.rank() == 0);
  if (options.fusion_thresholds.empty()) {
    run_with_runtime(options, std::nullopt, raw, reporter);
  }
  for (size_t threshold : options.fusion_thresholds) {
    run_with_runtime(options, threshold, raw, reporter);
  }
  return 0;
}

int run_gloo(int argc, char** argv) {
  const char* rank = std::getenv(env::kRank);
  try {
    auto raw = make_gloo_raw();
    return run(argc, argv, *raw);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runrun_bench rank %s (gloo): %s\n", rank ? rank : "?", e.what());
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(1);  // the runtime's threads may be blocked; the launcher stops the other ranks
  }
}

}  // namespace
}  // namespace runrun::perf

int main(int argc, char** argv) {
  if (runrun::perf::gloo_mode()) return runrun::perf::run_gloo(argc, argv);
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
    std::fprintf(stderr,
                 "runrun_bench rank %d: MPI gives thread level %d, not "
                 "MPI_THREAD_MULTIPLE; use an MPI built with thread support\n",
                 rank, provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int code = 1;
  try {
    auto raw = runrun::perf::make_mpi_raw();
    code = runrun::perf::run(argc, argv, *raw);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runrun_bench rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}
