#pragma once
// Why: the job's exit status must be 0 only when every rank exited 0; a failing rank must stop
// the job promptly with a message naming the rank, its host and its exit code or signal; and
// Ctrl-C / SIGTERM must stop every rank on every host without orphans. The supervisor runs
// either mpirun (which starts the ranks and tags their output) or, with `runrun --gloo`, one
// command per rank (a local rank shim, or a remote shell running one), each in its own session;
// it routes their output, watches the rank shims' events and signals, and turns all of it into
// one exit status. A rank started directly gets its environment block on its stdin, which then
// stays open as its lifeline: stopping the job closes every lifeline (each shim then stops its
// command), and kills what is left after the grace time. Its loop moves through explicit phases
// (running, failure grace, stopping, killed, done); its final verdict is
// launcher/processes/job_report.h.
// Thread-safety: runs on the main thread; blocks SIGINT/SIGTERM/SIGHUP/SIGCHLD while it runs
// (it receives them through a signalfd).

#include <cstdio>
#include <string>
#include <vector>

namespace runrun::launcher {

// One process the supervisor starts.
struct ChildCommand {
  std::vector<std::string> argv;
  int rank = -1;            // the world rank it runs; -1 for mpirun or srun (output tagged)
  std::string stdin_block;  // written to its stdin, which then stays open; "": /dev/null
};

struct SupervisorSettings {
  std::vector<ChildCommand> children;  // mpirun alone, or one command per rank in rank order
  std::vector<std::string> extra_env;  // NAME=value set for the children only
  int num_proc = 0;
  std::vector<int> layout;               // processes per host, in host order
  std::vector<std::string> host_labels;  // host names as the user wrote them
  int start_timeout_s = 30;              // every rank must have started by then
  // After a rank failed, the others get this long to end by themselves (mpirun stops them at
  // once; ranks started directly fail on their own, naming the lost peer; those still running
  // then are named, as the likely stuck ones, and stopped); after asking the children to stop,
  // they are killed after this long.
  int stop_grace_s = 10;
  std::string output_dir;            // per-rank output files ("" for none)
  bool verbose = false;              // also show mpirun's own job-end boxes
  std::FILE* rank_stdout = nullptr;  // where the ranks' stdout lines go (nullptr: stdout)
  bool timestamp_lines = false;      // --prefix-output-with-timestamp
  bool srun_labels = false;          // the one child is srun --label, not mpirun
};

// Exit statuses besides a rank's own code.
inline constexpr int kExitLauncherFailure = 1;  // start timeout, mpirun or a remote shell failed

// Runs the job; returns the launcher's exit status: 0 when every rank exited 0; the first
// failed rank's exit code (128+N for signal N); 128+N when the launcher was stopped by signal
// N; kExitLauncherFailure otherwise. Prints its diagnosis to stderr.
int supervise(const SupervisorSettings& settings);

}  // namespace runrun::launcher
