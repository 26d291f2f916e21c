#pragma once
// Why: the elastic driver starts and stops worker processes one by one while the job runs
// (unlike the supervisor's fixed set of ranks). One worker is one rank shim (local, or through
// the remote shell) with a stable worker id and its environment block on stdin, which stays
// open as its lifeline: closing it stops the worker (the shim stops its command); the session
// is killed after a grace. Output goes through the driver's OutputRouter, tagged by worker id.
// Thread-safety: none; the driver's single loop owns every worker.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "launcher/elastic/elastic_driver.h"
#include "launcher/processes/output_router.h"
#include "launcher/processes/subprocess.h"

namespace runrun::launcher {

// What starts one worker.
struct WorkerLaunch {
  std::vector<std::string> argv;
  std::string stdin_block;  // its environment, the rendezvous secret included
  int start_timeout_s = 30;
};

// The command and environment of worker `id` on `host` (`local`: this machine):
//   RUNRUN --rank-shim 1 --gloo-rank ID -- COMMAND...   (through the remote shell elsewhere)
// with RUNRUN_ELASTIC_WORKER=ID and RUNRUN_ELASTIC_TIMEOUT in its environment block.
WorkerLaunch settings_for_worker(const ElasticJobSettings& settings, const std::string& host,
                                 bool local, int id);

class ElasticWorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  int id = 0;
  int host = 0;           // index in the driver's host table
  bool started = false;   // its shim reported that it started
  bool exited = false;    // reaped
  bool stopping = false;  // the driver asked it to stop
  Clock::time_point start_deadline{}, kill_deadline{};

  ElasticWorkerProcess() = default;
  ElasticWorkerProcess(const ElasticWorkerProcess&) = delete;
  ElasticWorkerProcess& operator=(const ElasticWorkerProcess&) = delete;

  // Spawns it and writes its environment block. Throws InvalidArgumentError when it cannot.
  void start(const WorkerLaunch& launch);
  // Closes its lifeline; kill_now() is due at `kill_at`.
  void request_stop(Clock::time_point kill_at);
  // SIGKILL to its whole session.
  void kill_now();
  // True when it has just exited (waitpid without waiting).
  bool reap();
  // Waits for it (after kill_now).
  void wait_blocking();
  // Its exit code (128+N for signal N); valid once exited.
  int exit_code() const;
  std::string describe_end() const;  // "exit code 3", "signal 9 (Killed)"

  int output_fd(bool from_stderr) const {
    return (from_stderr ? fds_.stderr_fd : fds_.stdout_fd).get();
  }
  // Reads what is available on one output pipe into the router (closes it at end of file).
  void pump(OutputRouter& router, bool from_stderr);
  // At the end of the job: reads what is left of its output (briefly), closes everything,
  // kills what is left of its session and reaps it.
  void finish(OutputRouter& router);

 private:
  SpawnedProcess fds_;
  int status_ = 0;
  std::string program_;
};

}  // namespace runrun::launcher
