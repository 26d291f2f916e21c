#include "launcher/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "launcher/output_router.h"
#include "launcher/rank_topology.h"
#include "launcher/subprocess.h"

namespace runrun::launcher {
namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::seconds;

constexpr auto kDrainLimit = Seconds(3);  // output still open after mpirun exited

struct Job {
  const SupervisorSettings& settings;
  OutputRouter router;
  SpawnedProcess mpirun;
  bool mpirun_exited = false;
  int mpirun_status = 0;
  std::vector<bool> started;
  int started_count = 0;
  std::vector<RankEvent> failures;  // exited or signaled, in arrival order
  int stop_signal = 0;              // the signal that stopped the launcher
  bool stopping = false;
  bool killed = false;
  bool start_timed_out = false;
  Clock::time_point start_deadline, kill_deadline, drain_deadline, failure_deadline;
  bool failure_seen = false;

  explicit Job(const SupervisorSettings& s)
      : settings(s),
        router(stdout, stderr, s.output_dir, s.num_proc, s.verbose),
        started(s.num_proc) {}
};

std::string host_of(const Job& job, int rank) {
  if (rank < 0 || rank >= job.settings.num_proc) return "?";
  const int index = topology_of_rank(rank, job.settings.layout).host_index;
  return index < static_cast<int>(job.settings.host_labels.size())
             ? job.settings.host_labels[static_cast<std::size_t>(index)]
             : "?";
}

// Asks mpirun to stop every rank on every host; a second request kills its process group.
void request_stop(Job& job, int user_signal) {
  if (user_signal != 0 && job.stop_signal == 0) job.stop_signal = user_signal;
  if (job.stopping) {
    if (user_signal != 0 && !job.killed) {
      std::fprintf(stderr, "runrun: second stop request: killing mpirun\n");
      kill_session(job.mpirun.pid);
      job.killed = true;
    }
    return;
  }
  job.stopping = true;
  kill(job.mpirun.pid, SIGTERM);
  job.kill_deadline = Clock::now() + Seconds(job.settings.stop_grace_s);
}

void handle_events(Job& job) {
  for (const RankEvent& event : job.router.take_events()) {
    if (event.rank < 0 || event.rank >= job.settings.num_proc) continue;
    if (event.kind == RankEvent::Kind::kStarted) {
      if (!job.started[static_cast<std::size_t>(event.rank)]) ++job.started_count;
      job.started[static_cast<std::size_t>(event.rank)] = true;
    } else if (event.kind != RankEvent::Kind::kStopped) {
      job.failures.push_back(event);
      if (!job.failure_seen) {
        job.failure_seen = true;
        // mpirun stops the others by itself; if it has not after the grace time, we do.
        job.failure_deadline = Clock::now() + Seconds(job.settings.stop_grace_s);
      }
    }
  }
}

void handle_signals(Job& job, int signal_fd) {
  signalfd_siginfo info{};
  while (read(signal_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig != SIGCHLD) {
      std::fprintf(stderr, "runrun: got %s: stopping every rank\n", strsignal(sig));
      request_stop(job, sig);
    }
  }
  if (!job.mpirun_exited && waitpid(job.mpirun.pid, &job.mpirun_status, WNOHANG) > 0) {
    job.mpirun_exited = true;
    job.drain_deadline = Clock::now() + kDrainLimit;
  }
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
  if (!job.stopping && job.started_count < job.settings.num_proc) due.push_back(job.start_deadline);
  if (job.stopping && !job.killed) due.push_back(job.kill_deadline);
  if (job.mpirun_exited) due.push_back(job.drain_deadline);
  if (job.failure_seen && !job.stopping) due.push_back(job.failure_deadline);
  if (due.empty()) return -1;
  const auto left = *std::min_element(due.begin(), due.end()) - Clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
  return ms < 0 ? 0 : static_cast<int>(ms) + 1;
}

void handle_deadlines(Job& job) {
  const auto now = Clock::now();
  if (!job.stopping && job.started_count < job.settings.num_proc && now >= job.start_deadline) {
    report_start_timeout(job);
    job.start_timed_out = true;
    request_stop(job, 0);
  }
  if (job.failure_seen && !job.stopping && now >= job.failure_deadline) request_stop(job, 0);
  if (job.stopping && !job.killed && now >= job.kill_deadline) {
    std::fprintf(stderr, "runrun: mpirun did not stop within %d s: killing it\n",
                 job.settings.stop_grace_s);
    kill_session(job.mpirun.pid);
    job.killed = true;
  }
}

// Reads what is available; returns false at end of file.
bool pump(Job& job, int fd, bool from_stderr) {
  char buffer[65536];
  const ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  job.router.feed(from_stderr, std::string_view(buffer, static_cast<std::size_t>(n)));
  handle_events(job);
  return true;
}

void run_loop(Job& job, int signal_fd) {
  int out_fd = job.mpirun.stdout_fd, err_fd = job.mpirun.stderr_fd;
  while (!(job.mpirun_exited && out_fd < 0 && err_fd < 0)) {
    if (job.mpirun_exited && Clock::now() >= job.drain_deadline) break;
    pollfd fds[3] = {{signal_fd, POLLIN, 0}, {out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    if (poll(fds, 3, next_timeout_ms(job)) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) handle_signals(job, signal_fd);
    if (fds[1].revents != 0 && !pump(job, out_fd, false)) {
      close(out_fd);
      out_fd = -1;
    }
    if (fds[2].revents != 0 && !pump(job, err_fd, true)) {
      close(err_fd);
      err_fd = -1;
    }
    if (out_fd < 0 && err_fd < 0 && !job.mpirun_exited) handle_signals(job, signal_fd);
    handle_deadlines(job);
  }
  if (out_fd >= 0) close(out_fd);
  if (err_fd >= 0) close(err_fd);
  if (!job.mpirun_exited) {
    while (waitpid(job.mpirun.pid, &job.mpirun_status, 0) < 0 && errno == EINTR) {
    }
  }
  // Whatever mpirun started and left behind in its session (a remote-shell client stuck on an
  // unreachable host, say) goes with it.
  kill_session(job.mpirun.pid);
  job.router.finish();
  handle_events(job);
}

int report(Job& job) {
  const int status = job.mpirun_status;
  const int mpirun_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (job.stop_signal != 0) {
    std::fprintf(stderr, "runrun: stopped by %s; every rank was stopped\n",
                 strsignal(job.stop_signal));
    return 128 + job.stop_signal;
  }
  if (!job.failures.empty()) {
    const RankEvent& first = job.failures.front();
    std::fprintf(stderr, "runrun: rank %d on host %s failed with %s; the other ranks were "
                         "stopped",
                 first.rank, host_of(job, first.rank).c_str(), describe_rank_end(first).c_str());
    if (job.failures.size() > 1) {
      std::fprintf(stderr, " (%zu ranks failed in all)", job.failures.size());
    }
    std::fprintf(stderr, "\n");
    return first.kind == RankEvent::Kind::kSignaled ? 128 + first.value
                                                    : (first.value == 0 ? 1 : first.value);
  }
  if (job.start_timed_out) return kExitLauncherFailure;
  if (mpirun_code != 0) {
    job.router.release_held_boxes();  // mpirun's own account is the only one there is
    std::fprintf(stderr, "runrun: mpirun exited with status %d and no rank reported a failure "
                         "(a rank killed from outside, or mpirun could not start the ranks); see "
                         "mpirun's message above\n",
                 mpirun_code);
    return kExitLauncherFailure;
  }
  return 0;
}

}  // namespace

int supervise(const SupervisorSettings& settings) {
  sigset_t mask, previous;
  sigemptyset(&mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&mask, sig);
  sigprocmask(SIG_BLOCK, &mask, &previous);
  const int signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  Job job(settings);
  int exit_code = kExitLauncherFailure;
  try {
    job.mpirun = spawn_with_pipes(settings.argv, settings.extra_env);
    job.start_deadline = Clock::now() + Seconds(settings.start_timeout_s);
    run_loop(job, signal_fd);
    exit_code = report(job);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "runrun: %s\n", error.what());
  }
  close(signal_fd);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  return exit_code;
}

}  // namespace runrun::launcher
