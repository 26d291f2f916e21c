#include "launcher/elastic/elastic_worker_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstring>

#include "common/env_names.h"
#include "launcher/processes/child_io.h"
#include "launcher/remote/gloo_rank_commands.h"
#include "launcher/processes/rank_report.h"
#include "launcher/processes/rank_shim.h"
#include "launcher/remote/remote_shell.h"
#include "launcher/remote/shell_words.h"

namespace runrun::launcher {
namespace {

constexpr int kFinishDrainMs = 2000;  // output still open at the end of the job

}  // namespace

WorkerLaunch settings_for_worker(const ElasticJobSettings& settings, const std::string& host,
                                 bool local, int id) {
  const LaunchOptions& options = settings.options;
  std::vector<std::string> shim = {settings.plan.launcher_path, kRankShimFlag, "1", kGlooRankFlag,
                                   std::to_string(id),          "--"};
  shim.insert(shim.end(), options.command.begin(), options.command.end());
  WorkerLaunch launch;
  launch.start_timeout_s = options.start_timeout_s;
  if (local) {
    launch.argv = shim;
  } else {
    launch.argv = remote_shell_command(
        options, host,
        "cd -- " + shell_quote(settings.cwd) + " 2>/dev/null; exec " + shell_join(shim));
  }
  EnvEntries entries = settings.job_entries;
  entries.emplace_back(env::kElasticWorker, std::to_string(id));
  entries.emplace_back(env::kElasticTimeout, std::to_string(options.elastic.elastic_timeout_s));
  launch.stdin_block = encode_environment_block(
      gloo_rank_environment(settings.plan, settings.launcher_env, entries));
  return launch;
}

void ElasticWorkerProcess::start(const WorkerLaunch& launch) {
  program_ = launch.argv.front();
  fds_ = spawn_with_pipes(launch.argv, {}, true);
  start_deadline = Clock::now() + std::chrono::seconds(launch.start_timeout_s);
  write_block(fds_.stdin_fd.get(), launch.stdin_block);
}

void ElasticWorkerProcess::request_stop(Clock::time_point kill_at) {
  if (stopping) return;
  stopping = true;
  kill_deadline = kill_at;
  fds_.stdin_fd.reset();
}

void ElasticWorkerProcess::kill_now() {
  if (fds_.pid > 0) kill_session(fds_.pid);
  stopping = true;
  kill_deadline = Clock::time_point::max();
}

bool ElasticWorkerProcess::reap() {
  if (exited || fds_.pid <= 0) return false;
  const auto status = reap_if_exited(fds_.pid);
  if (!status) return false;
  status_ = *status;
  exited = true;
  fds_.stdin_fd.reset();
  return true;
}

void ElasticWorkerProcess::wait_blocking() {
  if (exited) return;
  if (const auto status = wait_for_exit(fds_.pid)) {
    status_ = *status;
    exited = true;
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
  char buffer[65536];
  const std::string_view bytes =
      read_available(from_stderr ? fds_.stderr_fd : fds_.stdout_fd, buffer);
  if (!bytes.empty()) router.feed_rank(id, from_stderr, bytes);
}

void ElasticWorkerProcess::finish(OutputRouter& router) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kFinishDrainMs);
  while ((fds_.stdout_fd.valid() || fds_.stderr_fd.valid()) && Clock::now() < deadline) {
    pollfd fds[2] = {{fds_.stdout_fd.get(), POLLIN, 0}, {fds_.stderr_fd.get(), POLLIN, 0}};
    if (poll(fds, 2, 100) <= 0) continue;
    if (fds[0].revents != 0) pump(router, false);
    if (fds[1].revents != 0) pump(router, true);
  }
  fds_.stdin_fd.reset();
  fds_.stdout_fd.reset();
  fds_.stderr_fd.reset();
  if (fds_.pid > 0) kill_session(fds_.pid);  // whatever it left in its session
  wait_blocking();
}

}  // namespace runrun::launcher
