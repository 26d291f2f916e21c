#include "launcher/processes/rank_shim.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/knobs.h"
#include "common/rank_events.h"
#include "launcher/processes/daemon_reaper.h"
#include "launcher/remote/environment.h"
#include "launcher/remote/gloo_rank_commands.h"
#include "launcher/remote/rank_environment_block.h"
#include "launcher/processes/rank_report.h"
#include "launcher/hosts/rank_topology.h"
#include "launcher/remote/srun_command.h"

namespace runrun::launcher {
namespace {

// The shim is a whole process: its signal handlers need these process-wide values.
volatile sig_atomic_t g_child_pid = 0;
volatile sig_atomic_t g_stop_requested = 0;
// Whether the command leads a process group of its own (a rank the launcher started: nobody
// but the shim stops its children, e.g. data-loader workers), so that signals go to the group.
volatile sig_atomic_t g_child_group = 0;

constexpr int kForwardedSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// How often the shim checks that its parent (mpirun, or Open MPI's daemon on a remote host) is
// still there, and how long an orphaned command gets between SIGTERM and SIGKILL.
constexpr long kParentCheckIntervalMs = 200;
constexpr int kOrphanGraceS = 5;
// The launcher writes the environment block right after starting the shim; a remote shell may
// take a while to connect first.
constexpr int kBlockTimeoutMs = 60000;

// Signals the command, and with it its process group when it has one of its own; SIGUSR1 and
// SIGUSR2 (a script's own "checkpoint now" signals) go to the command alone, since the
// processes it started (data-loader workers) would die of them.
void signal_command(int sig) {
  if (g_child_pid <= 0) return;
  const pid_t child = static_cast<pid_t>(g_child_pid);
  const bool group = g_child_group && sig != SIGUSR1 && sig != SIGUSR2;
  kill(group ? -child : child, sig);
}

void forward_signal(int sig) {
  const int saved_errno = errno;  // a signal handler
  g_stop_requested = 1;
  signal_command(sig);
  errno = saved_errno;
}

void write_stderr(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value == nullptr ? fallback : std::atoi(value);
}

int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

void set_int(const char* name, int value) { setenv(name, std::to_string(value).c_str(), 1); }

// The RUNRUN_* variables of a rank (common/env_names.h), and how the job was started.
void export_variables(const RankTopology& topology, int size, const char* controller) {
  set_int(env::kRank, topology.rank);
  set_int(env::kSize, size);
  set_int(env::kLocalRank, topology.local_rank);
  set_int(env::kLocalSize, topology.local_size);
  set_int(env::kCrossRank, topology.cross_rank);
  set_int(env::kCrossSize, topology.cross_size);
  set_int(env::kHostIndex, topology.host_index);
  setenv(env::kController, controller, 1);
  setenv(kRankEventsEnv, "1", 1);  // the runtime may tell the launcher why it failed
}

// Sets the RUNRUN_* topology of a rank the launcher started itself (runrun --gloo), whose
// world rank it was given.
void export_launcher_topology(int rank, const std::vector<int>& layout) {
  int size = 0;
  for (int slots : layout) size += slots;
  if (rank < 0 || rank >= size) {
    throw InvalidArgumentError(RUNRUN_WHERE, "runrun --rank-shim: rank " + std::to_string(rank) +
                                                 " is outside the layout's " +
                                                 std::to_string(size) + " ranks");
  }
  export_variables(topology_of_rank(rank, layout), size, "gloo");
}

// Sets the RUNRUN_* topology of this rank under mpirun; returns its world rank.
int export_topology(const std::vector<int>& layout) {
  const int rank = env_int("OMPI_COMM_WORLD_RANK", -1);
  if (rank < 0) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "runrun --rank-shim runs under mpirun or the "
                               "launcher only (OMPI_COMM_WORLD_RANK is not set, "
                               "and no --gloo-rank was given)");
  }
  RankTopology topology = topology_of_rank(rank, layout);
  const int local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", topology.local_rank);
  const int local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", topology.local_size);
  if (local_rank != topology.local_rank || local_size != topology.local_size) {
    write_stderr("runrun: rank " + std::to_string(rank) +
                 ": Open MPI placed this rank differently from the launcher's host order "
                 "(did --mpi-args change the mapping?); RUNRUN_LOCAL_* follow Open MPI, "
                 "RUNRUN_CROSS_* may be wrong\n");
    topology.local_rank = local_rank;
    topology.local_size = local_size;
  }
  export_variables(topology, env_int("OMPI_COMM_WORLD_SIZE", topology.size), "mpi");
  if (topology.local_size > usable_cores() &&
      std::getenv("OMPI_MCA_mpi_yield_when_idle") == nullptr) {
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
  }
  return rank;
}

// Sets the RUNRUN_* topology of a task srun started for the launcher (a Gloo job in a Slurm
// allocation); returns its world rank. Slurm's own placement (SLURM_LOCALID, SLURM_NODEID)
// wins over the layout where they differ, as Open MPI's does above.
int export_srun_topology(const std::vector<int>& layout) {
  const int rank = env_int("SLURM_PROCID", -1);
  int size = 0;
  for (int slots : layout) size += slots;
  if (rank < 0 || rank >= size) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "runrun --rank-shim --srun-task runs in a task that "
                               "srun started for the launcher (SLURM_PROCID is " +
                                   std::string(rank < 0 ? "not set"
                                                        : "outside the "
                                                          "layout") +
                                   ")");
  }
  RankTopology topology = topology_of_rank(rank, layout);
  const int local_rank = env_int("SLURM_LOCALID", topology.local_rank);
  const int node = env_int("SLURM_NODEID", topology.host_index);
  if (local_rank != topology.local_rank || node != topology.host_index) {
    write_stderr("runrun: rank " + std::to_string(rank) +
                 ": srun placed this rank differently from the launcher's plan; RUNRUN_LOCAL_RANK "
                 "follows Slurm, RUNRUN_CROSS_* may be wrong\n");
    topology.local_rank = local_rank;
    topology.host_index = node;
  }
  export_variables(topology, size, "gloo");
  return rank;
}

// Makes the command's PATH the one the launcher planned (see kRankPathEnv in environment.h).
void restore_rank_path() {
  const char* planned = std::getenv(kRankPathEnv);
  if (planned == nullptr) return;
  const std::string path = planned;
  setenv("PATH", path.c_str(), 1);
  unsetenv(kRankPathEnv);
}

void install_forwarding() {
  struct sigaction action{};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : kForwardedSignals) sigaction(sig, &action, nullptr);
}

// In the child: die with the shim, restore default signals, run the command (with stdin from
// /dev/null when the shim's stdin is the launcher's lifeline).
[[noreturn]] void exec_command(std::vector<char*>& command, pid_t shim, int rank,
                               bool stdin_is_lifeline) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != shim) _exit(128 + SIGKILL);  // the shim died before prctl
  if (stdin_is_lifeline) {
    setpgid(0, 0);  // a group of its own (g_child_group); the shim sets it too, first or second
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0) _exit(127);
    close(null_fd);
  }
  for (int sig : kForwardedSignals) signal(sig, SIG_DFL);
  sigset_t no_mask;
  sigemptyset(&no_mask);
  sigprocmask(SIG_SETMASK, &no_mask, nullptr);
  execvp(command[0], command.data());
  const std::string message = "runrun: rank " + std::to_string(rank) + ": cannot run '" +
                              command[0] + "': " + std::strerror(errno) + "\n";
  write_stderr(message);
  _exit(127);
}

// True when the lifeline (the shim's stdin from the launcher, after the environment block) has
// ended: the launcher closed it to stop the job, or the launcher or the remote shell carrying
// it is gone.
bool lifeline_ended(int fd) {
  if (fd < 0) return false;
  pollfd lifeline{fd, POLLIN, 0};
  if (poll(&lifeline, 1, 0) <= 0) return false;
  char byte = 0;
  const ssize_t n = read(fd, &byte, 1);
  return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

// Waits for the command and returns its wait status. If the shim's parent goes away without
// stopping it (mpirun killed, the launcher killed -9 and mpirun with it, a daemon that lost its
// mpirun), the shim is an orphan: nobody reads the rank's output or would ever stop it, so it
// stops the command itself (SIGTERM, SIGKILL after kOrphanGraceS s). Polling getppid() also
// covers what PR_SET_PDEATHSIG does not: that signal follows the parent *thread*, and Open
// MPI's daemons start ranks from a thread of their own. A rank started by the launcher itself
// is stopped the same way when its lifeline (`lifeline_fd`, -1 for none) ends.
// SIGCHLD is blocked (run_rank_shim) so that its arrival ends the sleep without a race.
int wait_for_command(pid_t child, pid_t parent, int lifeline_fd) {
  const timespec interval{0, kParentCheckIntervalMs * 1000000L};
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  long orphan_ms = -1;  // time since the parent was found gone
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) return status;
    if (orphan_ms < 0 && (getppid() != parent || lifeline_ended(lifeline_fd))) {
      orphan_ms = 0;
      g_stop_requested = 1;
      signal_command(SIGTERM);
    } else if (orphan_ms >= 0) {
      orphan_ms += kParentCheckIntervalMs;
      if (orphan_ms >= kOrphanGraceS * 1000L) signal_command(SIGKILL);
    }
    sigtimedwait(&child_signal, nullptr, &interval);
  }
}

// The rank's topology, exported for the command (and, from the launcher, its environment
// block read from stdin); the rank, or nothing after writing why to stderr.
std::optional<int> set_up_rank(char** argv, bool launcher_mode, bool srun_mode) {
  try {
    const std::vector<int> layout = parse_layout(argv[2]);
    if (srun_mode) return export_srun_topology(layout);
    if (!launcher_mode) return export_topology(layout);
    const int rank = std::atoi(argv[4]);
    for (const auto& [name, value] : read_environment_block(STDIN_FILENO, kBlockTimeoutMs)) {
      setenv(name.c_str(), value.c_str(), 1);
    }
    if (std::getenv(env::kElasticWorker) != nullptr) {
      setenv(env::kController, "gloo", 1);  // rank and size come per generation (elastic)
    } else {
      export_launcher_topology(rank, layout);
    }
    return rank;
  } catch (const Error& error) {
    write_stderr("runrun: rank " + std::string(launcher_mode ? argv[4] : "?") + ": " +
                 error.what() + "\n");
    return std::nullopt;
  }
}

// The shim's exit code for the command's wait status; reports a failed or stopped rank.
int report_command_end(int status, int rank) {
  RankEvent event{RankEvent::Kind::kExited, rank, 0};
  int exit_code = 0;
  if (WIFSIGNALED(status)) {
    event.kind = RankEvent::Kind::kSignaled;
    event.value = WTERMSIG(status);
    exit_code = 128 + event.value;
  } else {
    event.value = WEXITSTATUS(status);
    exit_code = event.value;
  }
  if (g_stop_requested) event.kind = RankEvent::Kind::kStopped;
  if (exit_code != 0 || g_stop_requested) write_stderr(format_rank_event(event));
  return exit_code;
}

}  // namespace

int run_rank_shim(int argc, char** argv) {
  // runrun --rank-shim LAYOUT [--gloo-rank R | --srun-task] -- COMMAND...
  const bool launcher_mode = argc >= 5 && std::string(argv[3]) == kGlooRankFlag;
  const bool srun_mode = argc >= 4 && std::string(argv[3]) == kSrunTaskFlag;
  const int separator = launcher_mode ? 5 : srun_mode ? 4 : 3;
  if (argc < separator + 2 || std::string(argv[separator]) != "--") {
    write_stderr(
        "runrun: usage: runrun --rank-shim LAYOUT [--gloo-rank RANK | --srun-task] -- "
        "COMMAND... (started by runrun)\n");
    return 2;
  }
  const std::optional<int> rank_or_none = set_up_rank(argv, launcher_mode, srun_mode);
  if (!rank_or_none) return 2;
  const int rank = *rank_or_none;
  restore_rank_path();
  std::vector<char*> command(argv + separator + 1, argv + argc);
  command.push_back(nullptr);
  install_forwarding();
  // If mpirun or its daemon dies without stopping us, stop too (and so the command).
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) forward_signal(SIGTERM);
  // Under mpirun, on a host other than mpirun's, the parent is Open MPI's daemon (see
  // daemon_reaper.h for why a failed rank may have to end it).
  UniqueFd daemon_pidfd = launcher_mode || srun_mode ? UniqueFd() : watch_open_mpi_daemon(parent);
  write_stderr(format_rank_event({RankEvent::Kind::kStarted, rank, 0}));
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  signal(SIGCHLD, SIG_DFL);  // queued while blocked, and waitpid sees the command's end
  sigprocmask(SIG_BLOCK, &child_signal, nullptr);  // see wait_for_command
  const pid_t shim = getpid();
  const pid_t child = fork();
  if (child < 0) {
    write_stderr("runrun: rank " + std::to_string(rank) + ": fork failed: " + std::strerror(errno) +
                 "\n");
    return 127;
  }
  if (child == 0) exec_command(command, shim, rank, launcher_mode);
  if (launcher_mode) {
    // Under mpirun the command stays in the shim's group, which Open MPI's daemon stops; a rank
    // the launcher started gets its own, which the shim stops with it.
    setpgid(child, child);
    g_child_group = 1;
  }
  g_child_pid = child;
  if (g_stop_requested) signal_command(SIGTERM);  // a stop that came before the pid was known
  const int status = wait_for_command(child, parent, launcher_mode ? STDIN_FILENO : -1);
  // A stopped job leaves nothing behind: what the command started and left running in its
  // group (it got the same signals) is killed now.
  if (g_stop_requested && g_child_group) signal_command(SIGKILL);
  const int exit_code = report_command_end(status, rank);
  // A rank that failed by itself ends the job; a daemon still there after the grace is cut off
  // from its mpirun. A rank the daemon stopped (or one orphaned already) needs no reaper.
  if (exit_code != 0 && !g_stop_requested && getppid() == parent) {
    const std::string peer_timeout_name(knobs::kPeerTimeout.env_name);
    leave_daemon_reaper(std::move(daemon_pidfd),
                        daemon_reaper_grace_ms(std::getenv(peer_timeout_name.c_str())));
  }
  return exit_code;  // a pidfd not handed to a reaper closes here
}

}  // namespace runrun::launcher
