#pragma once
// Why: every MPI call of the backend is checked; a failure becomes an exception that names the
// MPI call, the collective, the rank, MPI's own error string and file:line, so a failure on one
// of many ranks can be traced from its log line alone. Communicators use MPI_ERRORS_RETURN so
// errors reach this check instead of aborting the job.
// Thread-safety: stateless.

#include <mpi.h>

#include <string_view>

#include "common/errors.h"

namespace runrun::mpi {

// Throws PeerFailureError (MPI failures during communication are almost always a lost peer or
// a broken transport).
[[noreturn]] void throw_mpi_error(SourceLocation where, const char* call, int code,
                                  std::string_view op, int rank);

}  // namespace runrun::mpi

// RUNRUN_MPI_CHECK(MPI_Iallreduce(...), "allreduce", rank);
#define RUNRUN_MPI_CHECK(call, op, rank)                                                 \
  do {                                                                                   \
    const int runrun_mpi_rc_ = (call);                                                   \
    if (runrun_mpi_rc_ != MPI_SUCCESS) {                                                 \
      ::runrun::mpi::throw_mpi_error(RUNRUN_WHERE, #call, runrun_mpi_rc_, (op), (rank)); \
    }                                                                                    \
  } while (0)
