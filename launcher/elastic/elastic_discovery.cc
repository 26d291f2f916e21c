#include "launcher/elastic/elastic_discovery.h"

#include <sys/wait.h>

#include <cstring>

#include "common/errors.h"
#include "launcher/processes/child_io.h"
#include "launcher/processes/subprocess.h"

namespace runrun::launcher {
namespace {

std::string script_failed(const std::string& script, const std::string& what) {
  return "--host-discovery-script '" + script + "' " + what;
}

// The last line the script wrote on stderr, for the report ("" when none).
std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto start = text.find_last_of('\n');
  return start == std::string::npos ? text : text.substr(start + 1);
}

// The script through /bin/sh -c, in the background of a shell that waits for it: when the
// launcher dies (kill -9), the shell gets SIGTERM (spawn_with_pipes) and kills the process
// group, the script and what it started with it (a script run by `sh -c` directly would be
// its child, which outlives the launcher). The shell exits with the script's status.
std::vector<std::string> discovery_command(const std::string& script) {
  return {"/bin/sh", "-c", "trap 'kill -KILL 0' TERM\n{\n" + script + "\n} &\nwait $!"};
}

}  // namespace

std::vector<HostSlots> discover_hosts(const std::string& script, double timeout_s,
                                      int default_slots) {
  const auto runs = run_all_captured({discovery_command(script)}, timeout_s);
  const CapturedRun& run = runs.front();
  if (!run.started || run.timed_out || run.exit_code != 0) {
    throw InvalidArgumentError(
        RUNRUN_WHERE,
        script_failed(script, !run.started ? "could not start: " + run.error
                              : run.timed_out
                                  ? "did not finish within " +
                                        std::to_string(static_cast<int>(timeout_s)) + " s"
                                  : "exited with status " + std::to_string(run.exit_code)));
  }
  return parse_hostfile(run.output, "--host-discovery-script output", default_slots);
}

DiscoveryRun::DiscoveryRun(std::string script, std::chrono::milliseconds timeout, int default_slots)
    : script_(std::move(script)), timeout_(timeout), default_slots_(default_slots) {
  SpawnedProcess spawned = spawn_with_pipes(discovery_command(script_), {});
  pid_ = spawned.pid;
  stdout_fd_ = std::move(spawned.stdout_fd);
  stderr_fd_ = std::move(spawned.stderr_fd);
  deadline_ = Clock::now() + timeout;
}

DiscoveryRun::~DiscoveryRun() {
  stdout_fd_.reset();
  stderr_fd_.reset();
  if (pid_ <= 0) return;
  kill_session(pid_);  // also what it left running in its session
  if (!exited_) wait_for_exit(pid_);
}

void DiscoveryRun::pump(bool from_stderr) {
  char buffer[4096];
  (from_stderr ? stderr_text_ : output_) +=
      read_available(from_stderr ? stderr_fd_ : stdout_fd_, buffer);
}

bool DiscoveryRun::done(Clock::time_point now) {
  if (hosts_ || !error_.empty()) return true;
  if (!exited_) {
    if (const auto status = reap_if_exited(pid_)) {
      exited_ = true;
      status_ = *status;
    }
  }
  // Exited with its output read (what it left running in its session may hold the pipes: the
  // deadline ends those).
  if (exited_ && !stdout_fd_.valid() && !stderr_fd_.valid()) {
    finish_with(status_);
    return true;
  }
  if (now < deadline_) return false;
  kill_session(pid_);
  const bool exited = exited_;
  if (!exited_) {
    if (const auto status = wait_for_exit(pid_)) status_ = *status;
    exited_ = true;
  }
  stdout_fd_.reset();
  stderr_fd_.reset();
  if (exited) {  // it ended in time; what it left running held its output open
    finish_with(status_);
  } else {
    error_ = script_failed(
        script_, "did not finish within " + std::to_string(timeout_.count() / 1000) + " s");
  }
  return true;
}

void DiscoveryRun::finish_with(int status) {
  const std::string said = last_line(stderr_text_);
  const std::string detail = said.empty() ? "" : " (it said: " + said + ")";
  if (WIFSIGNALED(status)) {
    error_ = script_failed(script_, "was killed by signal " + std::to_string(WTERMSIG(status)) +
                                        " (" + strsignal(WTERMSIG(status)) + ")" + detail);
  } else if (WEXITSTATUS(status) != 0) {
    error_ = script_failed(script_,
                           "exited with status " + std::to_string(WEXITSTATUS(status)) + detail);
  } else {
    try {
      hosts_ = parse_hostfile(output_, "--host-discovery-script output", default_slots_);
    } catch (const Error& parse_error) {
      error_ = script_failed(
          script_, std::string("printed a line that is not a host: ") + parse_error.what());
    }
  }
}

}  // namespace runrun::launcher
