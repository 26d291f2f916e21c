#include "launcher/processes/job_report.h"

#include <cstring>

#include "launcher/processes/mpirun_aftermath.h"
#include "launcher/processes/supervisor.h"

namespace runrun::launcher {
namespace {

std::string line(const std::string& text) { return "runrun: " + text + "\n"; }

}  // namespace

JobReport job_report(const JobRecord& record) {
  using MpirunOutput = JobReport::MpirunOutput;
  if (record.stop_signal != 0) {
    return {128 + record.stop_signal,
            line(std::string("stopped by ") + strsignal(record.stop_signal) +
                 "; every rank was stopped"),
            MpirunOutput::kCrashAfterText};
  }
  if (record.failure) {
    return {record.failure->exit_code, line(record.failure->text), MpirunOutput::kCrashAfterText};
  }
  if (!record.direct && !record.lost_daemon_node.empty()) {
    return {kExitLauncherFailure,
            line(lost_daemon_summary(record.lost_daemon_node, record.host_labels, record.layout)),
            MpirunOutput::kCrashAfterText};
  }
  if (record.start_timed_out) return {kExitLauncherFailure, "", MpirunOutput::kNone};
  if (record.silent_rank >= 0) {
    return {
        kExitLauncherFailure,
        line("rank " + std::to_string(record.silent_rank) + " on host " + record.silent_rank_host +
             " stopped answering (stopped or hung) and was stopped with the other ranks"),
        MpirunOutput::kNone};
  }
  if (!record.direct && record.mpirun_exit_code != 0) {
    const std::string status = std::to_string(record.mpirun_exit_code);
    // Every rank ran and ended with 0 or was stopped: mpirun counts a rank that ends without
    // MPI_Finalize as failed, which is how runrun leaves after an error not every rank took
    // part in (core/runtime/runtime.cc: the transport is not finalized then).
    const std::string text =
        record.started_count == record.num_proc
            ? "mpirun exited with status " + status +
                  " although every rank started and none reported a failure: a rank ended "
                  "without MPI_Finalize (as runrun's ranks do after a stall shutdown or a lost "
                  "peer: see the ranks' messages above) or was killed from outside; see "
                  "mpirun's message above"
            : "mpirun exited with status " + status +
                  " and no rank reported a failure (a rank killed from outside, or mpirun could "
                  "not start the ranks); see mpirun's message above";
    return {kExitLauncherFailure, line(text), MpirunOutput::kReleasedBeforeText};
  }
  return {0, "", MpirunOutput::kNone};
}

}  // namespace runrun::launcher
