#include "launcher/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/common/errors.h"

namespace runrun::launcher {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> c_strings(const std::vector<std::string>& words) {
  std::vector<char*> out;
  for (const auto& word : words) out.push_back(const_cast<char*>(word.c_str()));
  out.push_back(nullptr);
  return out;
}

// Spawns with stdin </dev/null, stdout to out_fd, stderr to err_fd, in a new process group.
// Returns 0 or the errno value.
int spawn(const std::vector<std::string>& argv, int out_fd, int err_fd,
          const std::vector<std::string>& env_words, bool new_session, pid_t* pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) sigaddset(&default_signals, sig);
  posix_spawnattr_setsigdefault(&attributes, &default_signals);
  sigset_t no_mask;
  sigemptyset(&no_mask);
  posix_spawnattr_setsigmask(&attributes, &no_mask);
  const int group_flag = new_session ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP;
  posix_spawnattr_setflags(&attributes, static_cast<short>(group_flag | POSIX_SPAWN_SETSIGDEF |
                                                           POSIX_SPAWN_SETSIGMASK));
  auto args = c_strings(argv);
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  environment.insert(environment.end(), env_words.begin(), env_words.end());
  auto envp = c_strings(environment);
  const int rc = posix_spawnp(pid, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return rc;
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
  std::vector<int> fds(commands.size(), -1);
  for (std::size_t i = 0; i < commands.size(); ++i) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      runs[i].error = std::strerror(errno);
      continue;
    }
    const int rc = spawn(commands[i], pipe_fds[1], pipe_fds[1], {}, false, &pids[i]);
    close(pipe_fds[1]);
    if (rc != 0) {
      runs[i].error = std::strerror(rc);
      close(pipe_fds[0]);
      continue;
    }
    runs[i].started = true;
    fds[i] = pipe_fds[0];
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    std::vector<pollfd> polls;
    std::vector<std::size_t> owners;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i] >= 0) {
        polls.push_back({fds[i], POLLIN, 0});
        owners.push_back(i);
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                            Clock::now());
    if (polls.empty() || left.count() <= 0) break;
    if (poll(polls.data(), polls.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) {
      break;
    }
    for (std::size_t k = 0; k < polls.size(); ++k) {
      if (polls[k].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = read(polls[k].fd, buffer, sizeof(buffer));
      if (n > 0) {
        runs[owners[k]].output.append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(polls[k].fd);
        fds[owners[k]] = -1;
      }
    }
  }
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (pids[i] < 0) continue;
    if (fds[i] >= 0) close(fds[i]);
    int status = 0;
    pid_t done = 0;
    // Output closed does not mean exited: wait for the exit until the deadline, then kill.
    while ((done = waitpid(pids[i], &status, WNOHANG)) == 0 && Clock::now() < deadline) {
      usleep(5000);
    }
    if (done == 0) {
      runs[i].timed_out = true;
      kill(-pids[i], SIGKILL);
      while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
      }
    }
    record_status(status, &runs[i]);
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
                                const std::vector<std::string>& extra_env) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw InvalidArgumentError(RUNRUN_WHERE, std::string("cannot create a pipe: ") +
                                                 std::strerror(errno));
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw InvalidArgumentError(RUNRUN_WHERE, std::string("cannot create a pipe: ") +
                                                 std::strerror(errno));
  }
  SpawnedProcess process;
  const int rc = spawn(argv, out_pipe[1], err_pipe[1], extra_env, true, &process.pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw InvalidArgumentError(RUNRUN_WHERE, "cannot start " + argv[0] + ": " +
                                                 std::strerror(rc));
  }
  process.stdout_fd = out_pipe[0];
  process.stderr_fd = err_pipe[0];
  return process;
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
