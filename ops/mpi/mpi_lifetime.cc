#include "ops/mpi/mpi_lifetime.h"

#include <mpi.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/errors.h"
#include "common/fork_generation.h"

namespace runrun::mpi {
namespace {

std::mutex& lifetime_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::atomic<bool> finalize_skipped{false};
ForkStamp initialized_in;  // set before atexit registers finalize_at_exit

void finalize_at_exit() {
  if (finalize_skipped.load()) return;
  // A forked child's MPI state is the parent's: finalizing it would speak for the parent.
  if (forked_since(initialized_in)) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

void skip_finalize_at_exit() { finalize_skipped.store(true); }

void ensure_initialized() {
  std::lock_guard<std::mutex> lock(lifetime_mutex());
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) {
    throw UnsupportedError(RUNRUN_WHERE,
                           "the mpi backend cannot start: MPI was already finalized in this "
                           "process and cannot be initialized again; do not call MPI_Finalize "
                           "before runrun is done (runrun finalizes MPI itself at exit)");
  }
  if (initialized) return;
  // Open MPI's non-blocking allreduce (libnbc) picks the binomial algorithm for in-place
  // operations, 2-4x slower than MPI_Allreduce from 1 MiB up (docs/perf-notes/
  // mpi-2026-11-21.md, "Why, and what would close each gap"); every
  // runtime allreduce is in place. Rabenseifner's algorithm matches the blocking call. A value
  // the user set wins (overwrite = 0).
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", 0);
  int provided = 0;
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  if (rc != MPI_SUCCESS) {
    throw UnsupportedError(RUNRUN_WHERE, "MPI_Init_thread failed with code " + std::to_string(rc) +
                                             ": start the program under mpirun, or choose another "
                                             "backend (RUNRUN_BACKEND)");
  }
  watch_forks();
  initialized_in = fork_stamp();
  if (std::atexit(&finalize_at_exit) != 0) {
    throw InternalError(RUNRUN_WHERE, "could not register MPI_Finalize with atexit");
  }
}

bool is_active() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

bool threads_multiple() {
  if (!is_active()) return false;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

const char* thread_level_name() {
  if (!is_active()) return "not initialized";
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  switch (provided) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "unknown";
  }
}

}  // namespace runrun::mpi
