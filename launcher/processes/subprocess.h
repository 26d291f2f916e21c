#pragma once
// Why: the launcher starts other programs in three ways (checks like `ssh host true` with a
// time limit, `mpirun --version`, and the job's mpirun under supervision); this is the one place
// that spawns processes: fork and exec, each child in its own process group (so it can be
// stopped with everything it started), stdin from /dev/null, output through pipes.
// Thread-safety: functions are reentrant; each call owns the processes it starts.

#include <string>
#include <sys/types.h>
#include <vector>

#include "launcher/processes/unique_fd.h"

namespace runrun::launcher {

struct CapturedRun {
  bool started = false;    // false: could not start (error says why)
  bool timed_out = false;  // killed at the deadline
  int exit_code = -1;      // when it exited
  int signal = 0;          // when a signal ended it
  std::string output;      // stdout and stderr, interleaved
  std::string error;       // why it could not start
};

// Runs every command at once and waits at most `timeout_s` seconds for all of them; commands
// still running then are killed (their process group) and reported timed_out.
std::vector<CapturedRun> run_all_captured(const std::vector<std::vector<std::string>>& commands,
                                          double timeout_s);

// The path of `name` found in the colon-separated `path_env`, or "" (a name with '/' is
// returned as is when executable).
std::string find_executable(const std::string& name, const std::string& path_env);

// A running child whose stdout and stderr come through pipes (read ends owned here).
struct SpawnedProcess {
  pid_t pid = -1;     // also its process group id
  UniqueFd stdin_fd;  // the write end of its stdin, with stdin_pipe; else none
  UniqueFd stdout_fd;
  UniqueFd stderr_fd;
};

// Starts `argv` in a new session (so also a new process group; session id = process group id =
// pid) with stdin from /dev/null, or from a pipe whose write end is returned with
// `stdin_pipe`. `extra_env` entries ("NAME=value") are added to this process's environment for
// the child. The child gets SIGTERM when this process dies, however
// it dies (kill -9, the out-of-memory killer): mpirun then stops the job instead of outliving
// the launcher. Throws InvalidArgumentError when it cannot start (naming the program and the
// reason).
SpawnedProcess spawn_with_pipes(const std::vector<std::string>& argv,
                                const std::vector<std::string>& extra_env, bool stdin_pipe = false);

// Sends SIGKILL to every process of session `session` (found in /proc), e.g. what mpirun left
// behind in the session spawn_with_pipes gave it, even in other process groups.
void kill_session(pid_t session);

}  // namespace runrun::launcher
