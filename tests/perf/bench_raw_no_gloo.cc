// The raw Gloo side in a build without Gloo (bench_raw.h).
#include "common/errors.h"
#include "tests/perf/bench_raw.h"

namespace runrun::perf {

std::unique_ptr<RawComm> make_gloo_raw() {
  throw UnsupportedError(RUNRUN_WHERE,
                         "runrun_bench under `runrun --gloo`: this build has no "
                         "Gloo; install libgloo-dev and rebuild, or run it under "
                         "mpirun / `runrun --mpi`");
}

}  // namespace runrun::perf
