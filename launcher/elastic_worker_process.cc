#include "launcher/elastic_worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/env_names.h"
#include "launcher/gloo_rank_commands.h"
#include "launcher/rank_report.h"
#include "launcher/rank_shim.h"
#include "launcher/remote_shell.h"
#include "launcher/shell_words.h"

namespace runrun::launcher {
namespace {

constexpr int kFinishDrainMs = 2000;  // output still open at the end of the job

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

WorkerLaunch settings_for_worker(const ElasticJobSettings& settings, const std::string& host,
                                 bool local, int id) {
  const LaunchOptions& options = settings.options;
  std::vector<std::string> shim = {settings.plan.launcher_path, kRankShimFlag, "1",
                                   kGlooRankFlag, std::to_string(id), "--"};
  shim.insert(shim.end(), options.command.begin(), options.command.end());
  WorkerLaunch launch;
  launch.start_timeout_s = options.start_timeout_s;
  if (local) {
    launch.argv = shim;
  } else {
    launch.argv = remote_shell_command(
        options, host, "cd -- " + shell_quote(settings.cwd) + " 2>/dev/null; exec " +
                           shell_join(shim));
  }
  EnvEntries entries = settings.job_entries;
  entries.emplace_back(env::kElasticWorker, std::to_string(id));
  entries.emplace_back(env::kElasticTimeout, std::to_string(options.elastic.elastic_timeout_s));
  launch.stdin_block =
      encode_environment_block(gloo_rank_environment(settings.plan, settings.launcher_env,
                                                     entries));
  return launch;
}

ElasticWorkerProcess::~ElasticWorkerProcess() {
  close_fd(fds_.stdin_fd);
  close_fd(fds_.stdout_fd);
  close_fd(fds_.stderr_fd);
}

void ElasticWorkerProcess::start(const WorkerLaunch& launch) {
  program_ = launch.argv.front();
  fds_ = spawn_with_pipes(launch.argv, {}, true);
  start_deadline = Clock::now() + std::chrono::seconds(launch.start_timeout_s);
  const std::string& block = launch.stdin_block;
  if (block.size() > 60000) fcntl(fds_.stdin_fd, F_SETPIPE_SZ, static_cast<int>(block.size() + 4096));
  std::size_t done = 0;
  while (done < block.size()) {
    const ssize_t n = write(fds_.stdin_fd, block.data() + done, block.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // it is gone already; its exit is reported like any other
    done += static_cast<std::size_t>(n);
  }
}

void ElasticWorkerProcess::request_stop(Clock::time_point kill_at) {
  if (stopping) return;
  stopping = true;
  kill_deadline = kill_at;
  close_fd(fds_.stdin_fd);
}

void ElasticWorkerProcess::kill_now() {
  if (fds_.pid > 0) kill_session(fds_.pid);
  stopping = true;
  kill_deadline = Clock::time_point::max();
}

bool ElasticWorkerProcess::reap() {
  if (exited || fds_.pid <= 0) return false;
  if (waitpid(fds_.pid, &status_, WNOHANG) != fds_.pid) return false;
  exited = true;
  close_fd(fds_.stdin_fd);
  return true;
}

void ElasticWorkerProcess::wait_blocking() {
  while (!exited && fds_.pid > 0) {
    if (waitpid(fds_.pid, &status_, 0) == fds_.pid) exited = true;
    else if (errno != EINTR) break;
  }
}

int ElasticWorkerProcess::exit_code() const {
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
}

std::string ElasticWorkerProcess::describe_end() const {
  if (WIFSIGNALED(status_)) {
    return describe_rank_end({RankEvent::Kind::kSignaled, id, WTERMSIG(status_)});
  }
  // The shim exits 128+N when its command died of signal N.
  const int code = WEXITSTATUS(status_);
  if (code > 128 && code < 128 + 65) {
    return describe_rank_end({RankEvent::Kind::kSignaled, id, code - 128});
  }
  return describe_rank_end({RankEvent::Kind::kExited, id, code});
}

void ElasticWorkerProcess::pump(OutputRouter& router, bool from_stderr) {
  int& fd = from_stderr ? fds_.stderr_fd : fds_.stdout_fd;
  if (fd < 0) return;
  char buffer[65536];
  const ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close_fd(fd);
    return;
  }
  router.feed_rank(id, from_stderr, std::string_view(buffer, static_cast<std::size_t>(n)));
}

void ElasticWorkerProcess::finish(OutputRouter& router) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kFinishDrainMs);
  while ((fds_.stdout_fd >= 0 || fds_.stderr_fd >= 0) && Clock::now() < deadline) {
    pollfd fds[2] = {{fds_.stdout_fd, POLLIN, 0}, {fds_.stderr_fd, POLLIN, 0}};
    if (poll(fds, 2, 100) <= 0) continue;
    if (fds[0].revents != 0) pump(router, false);
    if (fds[1].revents != 0) pump(router, true);
  }
  close_fd(fds_.stdin_fd);
  close_fd(fds_.stdout_fd);
  close_fd(fds_.stderr_fd);
  if (fds_.pid > 0) kill_session(fds_.pid);  // whatever it left in its session
  wait_blocking();
}

}  // namespace runrun::launcher
