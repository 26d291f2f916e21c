#include "launcher/processes/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "launcher/processes/child_io.h"
#include "launcher/processes/failure_ledger.h"
#include "launcher/processes/job_report.h"
#include "launcher/processes/mpirun_aftermath.h"
#include "launcher/processes/output_router.h"
#include "launcher/hosts/rank_topology.h"
#include "launcher/processes/signal_scope.h"
#include "launcher/processes/subprocess.h"

namespace runrun::launcher {
namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::seconds;

constexpr auto kDrainLimit = Seconds(3);  // output still open after mpirun exited
// How long an exited child's pipes may stay open (something it started still holds them)
// before its end is accounted for without the rest of its output: its last words (the shim's
// report) were written before it exited, so they are in the pipe by then.
constexpr auto kChildDrainLimit = Seconds(1);

// Where the job is on its way to its end; it only moves forward (the loop in run_loop ends in
// kDone). A rank reported silent is waited on beside kRunning (silent_deadline), the ranks'
// start beside kRunning and kFailureGrace (start_deadline), and the output after the last
// child's exit beside any phase (drain_deadline).
enum class Phase {
  kRunning,       // no failure yet
  kFailureGrace,  // a rank failed: the others get stop_grace_s to end by themselves
  kStopping,      // every rank was asked to stop; they are killed at kill_deadline
  kKilled,        // every child's session was killed
  kDone,          // every child exited and its output was read (or given up on)
};

// A started process and what the loop knows of it.
struct Child {
  const ChildCommand* command = nullptr;
  SpawnedProcess process;  // its fds are invalid once closed
  bool exited = false;
  int status = 0;
  bool settled = false;                 // exited and its output read to the end (or given up on)
  Clock::time_point output_deadline{};  // set when it exited: kChildDrainLimit later
};

struct Job {
  const SupervisorSettings& settings;
  OutputRouter router;
  std::vector<Child> children;
  const bool direct;  // ranks started directly (runrun --gloo), not by mpirun
  Phase phase = Phase::kRunning;
  int exited_count = 0;
  std::vector<bool> started;
  std::vector<bool> ended;  // the rank's shim reported how it ended
  int started_count = 0;
  FailureLedger ledger;  // failures in arrival order, and what the ranks reported of them
  // Per rank: the first peer that reported it silent (stopped or hung), or -1; and when the
  // first such rank is stopped if it still runs (ranks started directly only; none while no
  // rank is reported silent, or once looked at).
  std::vector<int> silent_to;
  int silent_rank = -1;  // the rank stopped for it, for the summary
  std::optional<Clock::time_point> silent_deadline;
  int stop_signal = 0;           // the signal that stopped the launcher
  bool start_timed_out = false;  // for the summary (it was said when it happened)
  Clock::time_point start_deadline, kill_deadline, drain_deadline, failure_deadline;

  explicit Job(const SupervisorSettings& s)
      : settings(s),
        router(s.rank_stdout != nullptr ? s.rank_stdout : stdout, stderr, s.output_dir, s.num_proc,
               s.verbose, s.timestamp_lines, s.srun_labels),
        direct(!s.children.empty() && s.children.front().rank >= 0),
        started(s.num_proc),
        ended(s.num_proc),
        ledger(s.num_proc),
        silent_to(s.num_proc, -1) {}

  bool all_exited() const { return exited_count == static_cast<int>(children.size()); }
  bool stopping() const { return phase >= Phase::kStopping; }
  bool waiting_for_start() const { return !stopping() && started_count < settings.num_proc; }
};

// SIGKILL to every process of every child's session (what is left of it).
void kill_children(Job& job) {
  for (const Child& child : job.children) kill_session(child.process.pid);
}

std::string host_of(const Job& job, int rank) {
  if (rank < 0 || rank >= job.settings.num_proc) return "?";
  const int index = topology_of_rank(rank, job.settings.layout).host_index;
  return index < static_cast<int>(job.settings.host_labels.size())
             ? job.settings.host_labels[static_cast<std::size_t>(index)]
             : "?";
}

// Asks every rank on every host to stop: mpirun by SIGTERM; ranks started directly by closing
// their lifelines (each shim then stops its command). A second request kills them.
void request_stop(Job& job, int user_signal) {
  if (user_signal != 0 && job.stop_signal == 0) job.stop_signal = user_signal;
  if (job.stopping()) {
    if (user_signal != 0 && job.phase == Phase::kStopping) {
      std::fprintf(stderr, "runrun: second stop request: killing %s\n",
                   job.direct ? "every rank" : "mpirun");
      kill_children(job);
      job.phase = Phase::kKilled;
    }
    return;
  }
  job.phase = Phase::kStopping;
  for (Child& child : job.children) {
    if (job.direct) {
      child.process.stdin_fd.reset();
    } else if (!child.exited) {
      kill(child.process.pid, SIGTERM);
    }
  }
  job.kill_deadline = Clock::now() + Seconds(job.settings.stop_grace_s);
}

void record_failure(Job& job, const RankEvent& event) {
  job.ledger.record_failure(event);
  if (job.direct && job.ledger.failed_in_init(event.rank) && !job.stopping()) {
    // A rank that refused its own settings in init(): its peers wait for it inside init() and
    // can only fail later, for no reason of theirs. (mpirun stops them itself at once: the
    // rank exited without MPI_Finalize; a SIGTERM while it aborts only makes it crash.)
    request_stop(job, 0);
    return;
  }
  if (job.phase == Phase::kRunning) {
    job.phase = Phase::kFailureGrace;
    // mpirun stops the others by itself, and ranks started directly fail by themselves once
    // they notice the lost peer; whatever still runs after the grace time is stopped.
    job.failure_deadline = Clock::now() + Seconds(job.settings.stop_grace_s);
  }
}

// A rank that its peers hear nothing from is stopped or hung: once the others ended (exit 0
// included) nothing else would end it, and the job would wait for ever. It gets the grace time
// to end by itself, then the job is stopped.
void note_silent(Job& job, const RankEvent& event) {
  const int silent = event.value;
  if (!job.direct || silent < 0 || silent >= job.settings.num_proc) return;
  int& reporter = job.silent_to[static_cast<std::size_t>(silent)];
  if (reporter >= 0) return;
  reporter = event.rank;
  if (!job.silent_deadline) {
    job.silent_deadline = Clock::now() + Seconds(job.settings.stop_grace_s);
  }
}

// A rank started directly that neither exited nor reported its end.
bool still_running(const Job& job, const Child& child) {
  const int rank = child.command->rank;
  return rank >= 0 && !child.exited && !job.ended[static_cast<std::size_t>(rank)];
}

// The first rank reported silent that still runs, or -1.
int silent_still_running(const Job& job) {
  for (const Child& child : job.children) {
    const int rank = child.command->rank;
    if (still_running(job, child) && job.silent_to[static_cast<std::size_t>(rank)] >= 0) {
      return rank;
    }
  }
  return -1;
}

void handle_events(Job& job) {
  for (const RankEvent& event : job.router.take_events()) {
    if (event.rank < 0 || event.rank >= job.settings.num_proc) continue;
    job.ledger.note(event);
    if (event.kind == RankEvent::Kind::kStarted) {
      if (!job.started[static_cast<std::size_t>(event.rank)]) ++job.started_count;
      job.started[static_cast<std::size_t>(event.rank)] = true;
    } else if (event.kind == RankEvent::Kind::kPeerSilent) {
      note_silent(job, event);
    } else if (event.kind == RankEvent::Kind::kPeerLost ||
               event.kind == RankEvent::Kind::kPeerLeft ||
               event.kind == RankEvent::Kind::kInitFailed) {
      // In the ledger (note above).
    } else {
      job.ended[static_cast<std::size_t>(event.rank)] = true;
      if (event.kind != RankEvent::Kind::kStopped) record_failure(job, event);
    }
  }
}

void handle_signals(Job& job, ScopedSignalFd& signals) {
  for (const int sig : signals.take()) {
    if (sig != SIGCHLD) {
      std::fprintf(stderr, "runrun: got %s: stopping every rank\n", strsignal(sig));
      request_stop(job, sig);
    }
  }
  for (Child& child : job.children) {
    if (child.exited) continue;
    if (const auto status = reap_if_exited(child.process.pid)) {
      child.status = *status;
      child.exited = true;
      child.output_deadline = Clock::now() + kChildDrainLimit;
      ++job.exited_count;
      // A dead child's lifeline is closed; nothing is written to it any more.
      child.process.stdin_fd.reset();
      if (job.all_exited()) job.drain_deadline = Clock::now() + kDrainLimit;
    }
  }
}

// A child that exited and whose output is read is accounted for. A rank started directly
// whose shim never reported its end (the remote shell could not connect, the shim could not
// start) failed with its command's status, unless the launcher was stopping it.
void settle(Job& job, Child& child, bool output_done) {
  if (child.settled || !child.exited || !output_done) return;
  child.settled = true;
  const int rank = child.command->rank;
  if (rank < 0 || job.ended[static_cast<std::size_t>(rank)] || job.stopping()) return;
  const int status = child.status;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  RankEvent event{RankEvent::Kind::kExited, rank, WIFEXITED(status) ? WEXITSTATUS(status) : 0};
  if (WIFSIGNALED(status)) event = {RankEvent::Kind::kSignaled, rank, WTERMSIG(status)};
  std::fprintf(stderr,
               "runrun: rank %d on host %s: '%s' ended with %s before the rank reported "
               "how it ended (see its messages above)\n",
               rank, host_of(job, rank).c_str(), child.command->argv.front().c_str(),
               describe_rank_end(event).c_str());
  job.ended[static_cast<std::size_t>(rank)] = true;
  record_failure(job, event);
}

void report_start_timeout(Job& job) {
  std::string missing;
  int listed = 0;
  for (int rank = 0; rank < job.settings.num_proc && listed < 16; ++rank) {
    if (job.started[static_cast<std::size_t>(rank)]) continue;
    missing += (listed++ ? ", " : "") + std::to_string(rank) + " (" + host_of(job, rank) + ")";
  }
  std::fprintf(stderr,
               "runrun: only %d of %d ranks started within --start-timeout %d s; not started: "
               "%s%s. Check that the hosts can reach this one (--network-interface) and that "
               "runrun and the command exist at the same paths there.\n",
               job.started_count, job.settings.num_proc, job.settings.start_timeout_s,
               missing.c_str(), listed < job.settings.num_proc - job.started_count ? ", ..." : "");
}

// The next time something must happen, in poll()'s milliseconds (-1: none).
int next_timeout_ms(const Job& job) {
  std::vector<Clock::time_point> due;
  if (job.waiting_for_start()) due.push_back(job.start_deadline);
  if (job.phase == Phase::kStopping) due.push_back(job.kill_deadline);
  if (job.all_exited()) due.push_back(job.drain_deadline);
  for (const Child& child : job.children) {
    if (child.exited && !child.settled) due.push_back(child.output_deadline);
  }
  if (job.phase == Phase::kFailureGrace) due.push_back(job.failure_deadline);
  if (job.phase == Phase::kRunning && job.silent_deadline) due.push_back(*job.silent_deadline);
  if (due.empty()) return -1;
  const auto left = *std::min_element(due.begin(), due.end()) - Clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
  return ms < 0 ? 0 : static_cast<int>(ms) + 1;
}

// Ranks started directly that still run when the failure grace is over did not notice the
// failure by themselves: hung, stopped (SIGSTOP), or busy without collectives. Naming them is
// often the whole diagnosis (the others failed because of them).
void report_still_running(const Job& job) {
  std::string running;
  int count = 0;
  for (const Child& child : job.children) {
    if (!still_running(job, child)) continue;
    const int rank = child.command->rank;
    if (count++ < 16) {
      running +=
          (running.empty() ? "" : ", ") + std::to_string(rank) + " on host " + host_of(job, rank);
    }
  }
  if (count == 0) return;
  if (count > 16) running += ", ...";
  std::fprintf(stderr,
               "runrun: rank%s %s %s still running %d s after rank %d failed (hung, "
               "stopped, or not in a collective that could notice): stopping %s\n",
               count > 1 ? "s" : "", running.c_str(), count > 1 ? "were" : "was",
               job.settings.stop_grace_s, job.ledger.culprit().rank, count > 1 ? "them" : "it");
}

void handle_deadlines(Job& job) {
  const auto now = Clock::now();
  if (job.waiting_for_start() && now >= job.start_deadline) {
    report_start_timeout(job);
    job.start_timed_out = true;
    request_stop(job, 0);
  }
  if (job.phase == Phase::kFailureGrace && now >= job.failure_deadline) {
    if (job.direct) report_still_running(job);
    request_stop(job, 0);
  }
  // After a failure, its own grace names and stops whatever still runs (report_still_running).
  if (job.phase == Phase::kRunning && job.silent_deadline && now >= *job.silent_deadline) {
    job.silent_deadline.reset();  // looked at once
    const int rank = silent_still_running(job);
    if (rank >= 0) {
      job.silent_rank = rank;
      std::fprintf(stderr,
                   "runrun: rank %d on host %s stopped answering its peers (rank %d "
                   "heard no heartbeat from it for RUNRUN_PEER_TIMEOUT) and still runs "
                   "%d s later: it is stopped or hung; stopping every rank\n",
                   rank, host_of(job, rank).c_str(), job.silent_to[static_cast<std::size_t>(rank)],
                   job.settings.stop_grace_s);
      request_stop(job, 0);
    }
  }
  if (job.phase == Phase::kStopping && now >= job.kill_deadline) {
    std::fprintf(stderr, "runrun: %s did not stop within %d s: killing %s\n",
                 job.direct ? "some ranks" : "mpirun", job.settings.stop_grace_s,
                 job.direct ? "them" : "it");
    kill_children(job);
    job.phase = Phase::kKilled;
  }
}

// Reads what is available from one of `child`'s pipes; closes it at end of file.
void pump(Job& job, const Child& child, UniqueFd& fd, bool from_stderr) {
  char buffer[65536];
  const std::string_view bytes = read_available(fd, buffer);
  if (bytes.empty()) return;
  if (child.command->rank >= 0) {
    job.router.feed_rank(child.command->rank, from_stderr, bytes);
  } else {
    job.router.feed(from_stderr, bytes);
  }
  handle_events(job);
}

bool output_open(const Child& child) {
  return child.process.stdout_fd.valid() || child.process.stderr_fd.valid();
}

void run_loop(Job& job, ScopedSignalFd& signals) {
  while (job.phase != Phase::kDone) {
    const bool output_left = std::any_of(job.children.begin(), job.children.end(), output_open);
    if (job.all_exited() && (!output_left || Clock::now() >= job.drain_deadline)) {
      job.phase = Phase::kDone;
      break;
    }
    std::vector<pollfd> fds = {{signals.fd(), POLLIN, 0}};
    std::vector<std::pair<Child*, bool>> owners;  // (child, from_stderr) of fds[1...]
    for (Child& child : job.children) {
      for (bool from_stderr : {false, true}) {
        const UniqueFd& fd = from_stderr ? child.process.stderr_fd : child.process.stdout_fd;
        if (!fd.valid()) continue;
        fds.push_back({fd.get(), POLLIN, 0});
        owners.emplace_back(&child, from_stderr);
      }
    }
    if (poll(fds.data(), fds.size(), next_timeout_ms(job)) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) handle_signals(job, signals);
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto& [child, from_stderr] = owners[i - 1];
      pump(job, *child, from_stderr ? child->process.stderr_fd : child->process.stdout_fd,
           from_stderr);
    }
    // Output closed does not say the process exited (nor the reverse): look again each round.
    handle_signals(job, signals);
    for (Child& child : job.children) {
      // Not before its pipes are read to the end (its shim's report is the last thing in
      // them), unless something it left holds them open past kChildDrainLimit.
      settle(job, child, !output_open(child) || Clock::now() >= child.output_deadline);
    }
    handle_deadlines(job);
  }
  for (Child& child : job.children) {
    child.process.stdout_fd.reset();
    child.process.stderr_fd.reset();
    child.process.stdin_fd.reset();
    if (child.exited) continue;
    if (const auto status = wait_for_exit(child.process.pid)) child.status = *status;
  }
  // Whatever a child started and left behind in its session (a remote-shell client stuck on an
  // unreachable host, say) goes with it.
  kill_children(job);
  job.router.finish();
  handle_events(job);
}

// What happened, for job_report.
JobRecord record_of(const Job& job) {
  JobRecord record;
  record.direct = job.direct;
  record.stop_signal = job.stop_signal;
  if (!job.ledger.empty()) {
    std::vector<int> host_of_rank(static_cast<std::size_t>(job.settings.num_proc));
    for (int rank = 0; rank < job.settings.num_proc; ++rank) {
      host_of_rank[static_cast<std::size_t>(rank)] =
          topology_of_rank(rank, job.settings.layout).host_index;
    }
    record.failure = job.ledger.summarize(host_of_rank, job.settings.host_labels);
  }
  if (!job.router.lost_daemon_nodes().empty()) {
    record.lost_daemon_node = job.router.lost_daemon_nodes().front();
  }
  record.host_labels = job.settings.host_labels;
  record.layout = job.settings.layout;
  record.start_timed_out = job.start_timed_out;
  record.silent_rank = job.silent_rank;
  if (job.silent_rank >= 0) record.silent_rank_host = host_of(job, job.silent_rank);
  const int status = job.children.front().status;
  record.mpirun_exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  record.started_count = job.started_count;
  record.num_proc = job.settings.num_proc;
  return record;
}

// Prints the verdict, with mpirun's own reports where it says; returns the exit status.
int report(Job& job) {
  const JobReport verdict = job_report(record_of(job));
  using MpirunOutput = JobReport::MpirunOutput;
  if (verdict.mpirun_output == MpirunOutput::kReleasedBeforeText) {
    job.router.release_held_boxes();
    report_mpirun_crash(job.router, false);
  }
  std::fputs(verdict.text.c_str(), stderr);
  if (verdict.mpirun_output == MpirunOutput::kCrashAfterText) {
    report_mpirun_crash(job.router, true);
  }
  return verdict.exit_code;
}

}  // namespace

int supervise(const SupervisorSettings& settings) {
  ScopedSignalFd signals({SIGINT, SIGTERM, SIGHUP, SIGCHLD});
  Job job(settings);
  int exit_code = kExitLauncherFailure;
  // A lifeline of a rank that died is closed, not written to; never die of SIGPIPE anyway.
  const ScopedIgnoredSignal ignore_pipe(SIGPIPE);
  try {
    job.children.reserve(settings.children.size());
    for (const ChildCommand& command : settings.children) {
      Child child;
      child.command = &command;
      child.process =
          spawn_with_pipes(command.argv, settings.extra_env, !command.stdin_block.empty());
      if (!command.stdin_block.empty()) {
        write_block(child.process.stdin_fd.get(), command.stdin_block);
      }
      job.children.push_back(std::move(child));
    }
    job.start_deadline = Clock::now() + Seconds(settings.start_timeout_s);
    run_loop(job, signals);
    exit_code = report(job);
    exit_code = report_lost_output(job.router, settings.output_dir, exit_code);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "runrun: %s\n", error.what());
    for (Child& child : job.children) {
      child.process.stdin_fd.reset();
      child.process.stdout_fd.reset();
      child.process.stderr_fd.reset();
    }
    kill_children(job);
    for (const Child& child : job.children) wait_for_exit(child.process.pid);
  }
  return exit_code;
}

}  // namespace runrun::launcher
