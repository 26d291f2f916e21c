// The launcher's verdict on a job (launcher/processes/job_report.h): its exit status, the line it
// prints
// and where mpirun's own reports go, for each thing that can end a job.
#include "launcher/processes/job_report.h"

#include <catch2/catch.hpp>
#include <signal.h>

#include "launcher/processes/failure_ledger.h"
#include "launcher/processes/supervisor.h"

using namespace runrun::launcher;
using Kind = RankEvent::Kind;
using MpirunOutput = JobReport::MpirunOutput;

namespace {

// A job of 4 ranks, 2 per host on hosts a and b, that ended well.
JobRecord four_ranks(bool direct) {
  JobRecord record;
  record.direct = direct;
  record.host_labels = {"a", "b"};
  record.layout = {2, 2};
  record.num_proc = 4;
  record.started_count = 4;
  return record;
}

FailureLedger::Summary summary_of(const FailureLedger& ledger) {
  return ledger.summarize({0, 0, 1, 1}, {"a", "b"});
}

}  // namespace

TEST_CASE("launcher/job_report: every rank exited 0") {
  for (const bool direct : {false, true}) {
    const JobReport report = job_report(four_ranks(direct));
    CHECK(report.exit_code == 0);
    CHECK(report.text.empty());
    CHECK(report.mpirun_output == MpirunOutput::kNone);
  }
  // Ranks started directly: the first child is rank 0's command, whose status is no verdict.
  JobRecord record = four_ranks(true);
  record.mpirun_exit_code = 1;
  CHECK(job_report(record).exit_code == 0);
}

TEST_CASE("launcher/job_report: the first rank to fail is named, with its exit code") {
  FailureLedger ledger(4);
  ledger.record_failure({Kind::kExited, 2, 3});  // first by time
  ledger.record_failure({Kind::kExited, 0, 1});
  JobRecord record = four_ranks(false);
  record.failure = summary_of(ledger);
  record.mpirun_exit_code = 3;
  const JobReport report = job_report(record);
  CHECK(report.exit_code == 3);
  CHECK(report.text == "runrun: " + record.failure->text + "\n");
  CHECK(report.text.find("rank 2 on host b") != std::string::npos);
  CHECK(report.mpirun_output == MpirunOutput::kCrashAfterText);
}

TEST_CASE("launcher/job_report: a rank ended by a signal gives 128+N") {
  FailureLedger ledger(4);
  ledger.record_failure({Kind::kSignaled, 1, SIGKILL});
  JobRecord record = four_ranks(true);
  record.failure = summary_of(ledger);
  const JobReport report = job_report(record);
  CHECK(report.exit_code == 128 + SIGKILL);
  CHECK(report.text == "runrun: " + record.failure->text + "\n");
  CHECK(report.text.find("rank 1 on host a") != std::string::npos);
}

TEST_CASE("launcher/job_report: a stop signal wins over everything else") {
  FailureLedger ledger(4);
  ledger.record_failure({Kind::kExited, 2, 3});
  JobRecord record = four_ranks(false);
  record.stop_signal = SIGINT;
  record.failure = summary_of(ledger);
  record.start_timed_out = true;
  record.mpirun_exit_code = 128 + SIGTERM;
  const JobReport report = job_report(record);
  CHECK(report.exit_code == 128 + SIGINT);
  CHECK(report.text == "runrun: stopped by Interrupt; every rank was stopped\n");
  CHECK(report.mpirun_output == MpirunOutput::kCrashAfterText);
}

TEST_CASE("launcher/job_report: a daemon mpirun lost is named with its host's ranks") {
  JobRecord record = four_ranks(false);
  record.lost_daemon_node = "b";
  record.mpirun_exit_code = 1;
  const JobReport report = job_report(record);
  CHECK(report.exit_code == kExitLauncherFailure);
  CHECK(report.text ==
        "runrun: the network link to host b (ranks 2-3) was lost (a network partition, or the "
        "host went down): mpirun lost its connection to Open MPI's daemon there (its TCP "
        "keepalive, set from RUNRUN_PEER_TIMEOUT, went unanswered); no rank caused the failure, "
        "and the ranks were stopped. Check the network between this host and b\n");
  CHECK(report.mpirun_output == MpirunOutput::kCrashAfterText);
  // A node that is none of the hosts is named as mpirun did.
  record.lost_daemon_node = "10.0.0.9";
  CHECK(job_report(record).text.find("link to host 10.0.0.9 was lost") != std::string::npos);
  // A rank's failure comes first; ranks started directly have no daemons.
  FailureLedger ledger(4);
  ledger.record_failure({Kind::kExited, 0, 5});
  record.failure = summary_of(ledger);
  CHECK(job_report(record).exit_code == 5);
  JobRecord direct = four_ranks(true);
  direct.lost_daemon_node = "b";
  CHECK(job_report(direct).exit_code == 0);
}

TEST_CASE("launcher/job_report: a start timeout fails quietly (it was said at the time)") {
  JobRecord record = four_ranks(false);
  record.start_timed_out = true;
  record.started_count = 2;
  record.mpirun_exit_code = 128 + SIGKILL;  // killed by the launcher after the grace
  const JobReport report = job_report(record);
  CHECK(report.exit_code == kExitLauncherFailure);
  CHECK(report.text.empty());
  CHECK(report.mpirun_output == MpirunOutput::kNone);
}

TEST_CASE("launcher/job_report: a silent rank stopped by the launcher is named") {
  JobRecord record = four_ranks(true);
  record.silent_rank = 3;
  record.silent_rank_host = "b";
  const JobReport report = job_report(record);
  CHECK(report.exit_code == kExitLauncherFailure);
  CHECK(report.text ==
        "runrun: rank 3 on host b stopped answering (stopped or hung) and was "
        "stopped with the other ranks\n");
  CHECK(report.mpirun_output == MpirunOutput::kNone);
}

TEST_CASE("launcher/job_report: mpirun failed although no rank did") {
  JobRecord record = four_ranks(false);
  record.mpirun_exit_code = 1;
  JobReport report = job_report(record);
  CHECK(report.exit_code == kExitLauncherFailure);
  CHECK(report.text ==
        "runrun: mpirun exited with status 1 although every rank started and none reported a "
        "failure: a rank ended without MPI_Finalize (as runrun's ranks do after a stall "
        "shutdown or a lost peer: see the ranks' messages above) or was killed from outside; "
        "see mpirun's message above\n");
  CHECK(report.mpirun_output == MpirunOutput::kReleasedBeforeText);

  record.started_count = 3;
  record.mpirun_exit_code = 128 + SIGSEGV;
  report = job_report(record);
  CHECK(report.exit_code == kExitLauncherFailure);
  CHECK(report.text ==
        "runrun: mpirun exited with status 139 and no rank reported a failure (a rank killed "
        "from outside, or mpirun could not start the ranks); see mpirun's message above\n");
  CHECK(report.mpirun_output == MpirunOutput::kReleasedBeforeText);
}
