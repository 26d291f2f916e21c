#pragma once
// Why: what the launcher says about mpirun's own reports once the job is over (issue 36,
// point 5). A daemon mpirun lost is the job's story when no rank reported a failure (the
// keepalive on mpirun's connections noticed the cut link before the ranks' peer monitors
// did): the summary names the host and its ranks. mpirun's crash while shutting down after
// that (Open MPI 4.1 segfaults in PMIx_Finalize after a lost daemon) is not: its report goes to
// a file and the terminal gets one line. Thread-safety: the supervisor's thread alone.

#include <string>
#include <vector>

#include "launcher/processes/output_router.h"

namespace runrun::launcher {

// The summary of a daemon mpirun lost on `node` (OutputRouter::lost_daemon_nodes), without
// "runrun: ": "the network link to host ns2 (ranks 2-3) was lost ...". Pure.
std::string lost_daemon_summary(const std::string& node,
                                const std::vector<std::string>& host_labels,
                                const std::vector<int>& layout);

// Keeps mpirun's crash report, if any, out of the story: written to a file named in one line
// (`after_verdict`: the job's own summary was said; else the report is printed as it came,
// since it is the only account there is).
void report_mpirun_crash(OutputRouter& router, bool after_verdict);

}  // namespace runrun::launcher
