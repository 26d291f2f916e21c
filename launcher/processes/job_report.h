#pragma once
// Why: the launcher's last words on a job (its exit status, and the line that says why it
// failed) follow from what happened: a stop signal, the ranks' failures, a daemon mpirun lost, a
// start timeout, a rank that went silent, mpirun's own status. Kept apart from the supervisor's
// processes and pipes, that diagnosis is a pure function that unit tests cover case by case
// (tests/unit/launcher/job_report_test.cc); the supervisor only gathers the record and prints.
// Thread-safety: pure; any thread.

#include <optional>
#include <string>
#include <vector>

#include "launcher/processes/failure_ledger.h"

namespace runrun::launcher {

// What happened to a job, as the supervisor saw it once every child was reaped.
struct JobRecord {
  bool direct = false;  // ranks started directly (runrun --gloo), not by mpirun
  int stop_signal = 0;  // the first signal that stopped the launcher, or 0
  // The ranks' failures, summarized (FailureLedger::summarize); none when no rank failed.
  std::optional<FailureLedger::Summary> failure;
  std::string lost_daemon_node;          // the first node whose daemon mpirun lost, or ""
  std::vector<std::string> host_labels;  // the hosts as the user wrote them
  std::vector<int> layout;               // processes per host, in host order
  bool start_timed_out = false;          // not every rank started within --start-timeout
  int silent_rank = -1;                  // the rank stopped for going silent, or -1
  std::string silent_rank_host;          // its host label
  int mpirun_exit_code = 0;              // mpirun's status (128+N for signal N); mpirun only
  int started_count = 0;                 // ranks that reported they started
  int num_proc = 0;
};

// The verdict: the launcher's exit status and what it prints to stderr.
struct JobReport {
  int exit_code = 0;
  std::string text;  // whole lines, each "runrun: ...\n"; "" for none
  // What becomes of mpirun's own reports (launcher/processes/mpirun_aftermath.h, output_router.h).
  enum class MpirunOutput {
    kNone,
    kCrashAfterText,      // a crash report, if any, goes to a file named after `text`
    kReleasedBeforeText,  // held job-end boxes and any crash report are printed before
                          // `text`: mpirun's own account is the only one there is
  } mpirun_output = MpirunOutput::kNone;
};

// In order: stopped by a signal (128+N); a rank failed (the ledger's summary and exit status);
// mpirun lost a daemon (kExitLauncherFailure); the ranks did not all start (said when it
// happened); a silent rank was stopped; mpirun failed with no rank failure; else 0.
JobReport job_report(const JobRecord& record);

}  // namespace runrun::launcher
