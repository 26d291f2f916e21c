#pragma once
// Why: the job's exit status must be 0 only when every rank exited 0; a failing rank must stop
// the job promptly with a message naming the rank, its host and its exit code or signal; and
// Ctrl-C / SIGTERM must stop every rank on every host without orphans. The supervisor runs
// mpirun (in its own process group), routes its output, watches the rank shims' events and
// signals, and turns all of it into one exit status.
// Thread-safety: runs on the main thread; blocks SIGINT/SIGTERM/SIGHUP/SIGCHLD while it runs
// (it receives them through a signalfd).

#include <string>
#include <vector>

namespace runrun::launcher {

struct SupervisorSettings {
  std::vector<std::string> argv;        // the mpirun command
  std::vector<std::string> extra_env;   // NAME=value set for mpirun only
  int num_proc = 0;
  std::vector<int> layout;              // processes per host, in host order
  std::vector<std::string> host_labels; // host names as the user wrote them
  int start_timeout_s = 30;             // every rank must have started by then
  int stop_grace_s = 10;                // after asking mpirun to stop, SIGKILL its group then
  std::string output_dir;               // per-rank output files ("" for none)
  bool verbose = false;                 // also show mpirun's own job-end boxes
};

// Exit statuses besides a rank's own code.
inline constexpr int kExitLauncherFailure = 1;  // start timeout, mpirun failed by itself

// Runs the job; returns the launcher's exit status: 0 when every rank exited 0; the first
// failed rank's exit code (128+N for signal N); 128+N when the launcher was stopped by signal
// N; kExitLauncherFailure otherwise. Prints its diagnosis to stderr.
int supervise(const SupervisorSettings& settings);

}  // namespace runrun::launcher
