#pragma once
// Why: every rank starts through `runrun --rank-shim LAYOUT -- COMMAND...` (mpirun runs it on
// each host). The shim gives the command the RUNRUN_* topology variables (from Open MPI's
// OMPI_COMM_WORLD_* and the launcher's host layout) and exactly the PATH the launcher planned
// (RUNRUN_RANK_PATH: Open MPI may have put its prefix first), sets
// OMPI_MCA_mpi_yield_when_idle=1 when the ranks on this host outnumber its cores, reports start
// and end to the launcher (marker lines on stderr, see rank_report.h), forwards stop signals to
// the command, stops the command when its own parent (mpirun or Open MPI's daemon) disappears,
// and guarantees the command dies with it (PR_SET_PDEATHSIG), so no rank outlives the job.
// Thread-safety: runs as the whole process (main), single-threaded.

namespace runrun::launcher {

// argv[0] is runrun, argv[1] is --rank-shim. Returns the process exit status: the command's
// exit code, 128+N when signal N ended it, 127 when it could not be started.
int run_rank_shim(int argc, char** argv);

}  // namespace runrun::launcher
