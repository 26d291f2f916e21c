#include "launcher/processes/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/errors.h"
#include "launcher/processes/child_io.h"

namespace runrun::launcher {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> c_strings(const std::vector<std::string>& words) {
  std::vector<char*> out;
  for (const auto& word : words) out.push_back(const_cast<char*>(word.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the forked child: set up and exec; on failure writes errno to `error_fd` and exits 127.
// Only async-signal-safe calls here (everything was prepared before fork).
[[noreturn]] void exec_child(char* const* args, char* const* envp, int in_fd, int out_fd,
                             int err_fd, int error_fd, bool new_session, pid_t parent,
                             int parent_death_signal) {
  if (new_session ? setsid() < 0 : setpgid(0, 0) != 0) {
    // Report below like an exec failure.
  } else if (parent_death_signal != 0 &&
             (prctl(PR_SET_PDEATHSIG, parent_death_signal) != 0 || getppid() != parent)) {
    errno = ESRCH;  // the launcher died before prctl: do not start an orphan
  } else if (dup2(in_fd, STDIN_FILENO) >= 0 && dup2(out_fd, STDOUT_FILENO) >= 0 &&
             dup2(err_fd, STDERR_FILENO) >= 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
    sigset_t no_mask;
    sigemptyset(&no_mask);
    sigprocmask(SIG_SETMASK, &no_mask, nullptr);
    execvpe(args[0], args, envp);
  }
  const int error = errno;
  (void)!write(error_fd, &error, sizeof(error));
  _exit(127);
}

// Starts `argv` with stdin from in_fd (-1: /dev/null), stdout to out_fd, stderr to err_fd, in a
// new process group (or session), with `env_words` added to this process's environment; with
// `parent_death_signal` != 0 the child gets that signal when this process dies (also by
// SIGKILL). Returns 0 or the errno value of what failed.
int spawn(const std::vector<std::string>& argv, int in_fd, int out_fd, int err_fd,
          const std::vector<std::string>& env_words, bool new_session, int parent_death_signal,
          pid_t* pid) {
  auto args = c_strings(argv);
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  environment.insert(environment.end(), env_words.begin(), env_words.end());
  auto envp = c_strings(environment);
  const UniqueFd null_fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_fd.valid()) return errno;
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return errno;
  UniqueFd error_read(error_pipe[0]), error_write(error_pipe[1]);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    exec_child(args.data(), envp.data(), in_fd >= 0 ? in_fd : null_fd.get(), out_fd, err_fd,
               error_write.get(), new_session, parent, parent_death_signal);
  }
  const int fork_error = errno;
  error_write.reset();
  if (child < 0) return fork_error;
  int exec_error = 0;
  ssize_t n = 0;
  while ((n = read(error_read.get(), &exec_error, sizeof(exec_error))) < 0 && errno == EINTR) {}
  if (n == static_cast<ssize_t>(sizeof(exec_error))) {  // exec failed: the child exited 127
    wait_for_exit(child);
    return exec_error;
  }
  *pid = child;
  return 0;
}

void record_status(int status, CapturedRun* run) {
  if (WIFEXITED(status)) run->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run->signal = WTERMSIG(status);
}

}  // namespace

std::vector<CapturedRun> run_all_captured(const std::vector<std::vector<std::string>>& commands,
                                          double timeout_s) {
  std::vector<CapturedRun> runs(commands.size());
  std::vector<pid_t> pids(commands.size(), -1);
  std::vector<UniqueFd> fds(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      runs[i].error = std::strerror(errno);
      continue;
    }
    UniqueFd read_end(pipe_fds[0]);
    const int rc = spawn(commands[i], -1, pipe_fds[1], pipe_fds[1], {}, false, 0, &pids[i]);
    close(pipe_fds[1]);
    if (rc != 0) {
      runs[i].error = std::strerror(rc);
      continue;
    }
    runs[i].started = true;
    fds[i] = std::move(read_end);
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    std::vector<pollfd> polls;
    std::vector<std::size_t> owners;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].valid()) {
        polls.push_back({fds[i].get(), POLLIN, 0});
        owners.push_back(i);
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (polls.empty() || left.count() <= 0) break;
    if (poll(polls.data(), polls.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) {
      break;
    }
    for (std::size_t k = 0; k < polls.size(); ++k) {
      if (polls[k].revents == 0) continue;
      char buffer[4096];
      runs[owners[k]].output += read_available(fds[owners[k]], buffer);
    }
  }
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (pids[i] < 0) continue;
    fds[i].reset();
    // Output closed does not mean exited: wait for the exit until the deadline, then kill.
    std::optional<int> status;
    while (!(status = reap_if_exited(pids[i])) && Clock::now() < deadline) usleep(5000);
    if (!status) {
      runs[i].timed_out = true;
      kill(-pids[i], SIGKILL);
      status = wait_for_exit(pids[i]);
    }
    record_status(status.value_or(0), &runs[i]);
  }
  return runs;
}

std::string find_executable(const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  std::size_t start = 0;
  while (start <= path_env.size()) {
    auto colon = path_env.find(':', start);
    if (colon == std::string::npos) colon = path_env.size();
    std::string dir = path_env.substr(start, colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return "";
}

SpawnedProcess spawn_with_pipes(const std::vector<std::string>& argv,
                                const std::vector<std::string>& extra_env, bool stdin_pipe) {
  // [0] stdin (the child reads [0]), [1] stdout, [2] stderr (the child writes [1]).
  UniqueFd pipes[3][2];
  for (int i = stdin_pipe ? 0 : 1; i < 3; ++i) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) {
      throw InvalidArgumentError(RUNRUN_WHERE,
                                 std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    pipes[i][0].reset(ends[0]);
    pipes[i][1].reset(ends[1]);
  }
  SpawnedProcess process;
  const int rc = spawn(argv, pipes[0][0].get(), pipes[1][1].get(), pipes[2][1].get(), extra_env,
                       true, SIGTERM, &process.pid);
  if (rc != 0) {
    throw InvalidArgumentError(RUNRUN_WHERE, "cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  process.stdin_fd = std::move(pipes[0][1]);
  process.stdout_fd = std::move(pipes[1][0]);
  process.stderr_fd = std::move(pipes[2][0]);
  return process;  // the child's ends close here
}

void kill_session(pid_t session) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return;
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid == getpid()) continue;
    std::FILE* stat = std::fopen(("/proc/" + std::string(entry->d_name) + "/stat").c_str(), "r");
    if (stat == nullptr) continue;
    char line[1024] = {};
    const bool read_ok = std::fgets(line, sizeof(line), stat) != nullptr;
    std::fclose(stat);
    // Fields after "(comm)": state ppid pgrp session ...
    const char* after_comm = read_ok ? std::strrchr(line, ')') : nullptr;
    char state = 0;
    long ppid = 0, pgrp = 0, sid = 0;
    if (after_comm != nullptr &&
        std::sscanf(after_comm + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &sid) == 4 &&
        sid == session) {
      kill(static_cast<pid_t>(pid), SIGKILL);
    }
  }
  closedir(proc);
}

}  // namespace runrun::launcher
