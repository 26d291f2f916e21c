#pragma once
// Why: an elastic job learns its hosts from --host-discovery-script, run every second while the
// job runs. Run synchronously, a slow or hanging script would stall the elastic driver (output,
// worker failures, signals) for as long as it takes; DiscoveryRun runs it as a child process
// (its own session, /bin/sh -c) that the driver's poll loop watches: its output read as it
// comes, its end reaped without waiting, its whole session killed past a timeout. A run that
// fails (cannot start, non-zero status, signal, timeout) gives an error the driver reports.
// Thread-safety: none; one DiscoveryRun is owned by the driver's single loop.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/hosts/host_list.h"
#include "launcher/processes/unique_fd.h"

namespace runrun::launcher {

// The hosts a discovery script prints now ("host:slots" or "host slots=N" lines; a bare "host"
// has `default_slots`, --slots-per-host), run with a bound of `timeout_s`, waiting for it (used
// before the job starts). Throws InvalidArgumentError naming the script when it fails.
std::vector<HostSlots> discover_hosts(const std::string& script, double timeout_s,
                                      int default_slots = 1);

class DiscoveryRun {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts `script`; it must end within `timeout`; a host it prints without slots has
  // `default_slots`. Throws InvalidArgumentError when it cannot start.
  DiscoveryRun(std::string script, std::chrono::milliseconds timeout, int default_slots = 1);
  // Kills and reaps what is left of it.
  ~DiscoveryRun();
  DiscoveryRun(const DiscoveryRun&) = delete;
  DiscoveryRun& operator=(const DiscoveryRun&) = delete;

  // Its output pipes (stdout, stderr), to poll; -1 once closed.
  int output_fd(bool from_stderr) const { return (from_stderr ? stderr_fd_ : stdout_fd_).get(); }
  // Reads what is available on one of them.
  void pump(bool from_stderr);
  // When it must have ended.
  Clock::time_point deadline() const { return deadline_; }
  // True once it is over: exited with its output read, or killed at the deadline `now` passed.
  // Then exactly one of hosts() / error() holds the result.
  bool done(Clock::time_point now);
  const std::optional<std::vector<HostSlots>>& hosts() const { return hosts_; }
  const std::string& error() const { return error_; }

 private:
  void finish_with(int status);

  std::string script_;
  pid_t pid_ = -1;  // also its session id
  UniqueFd stdout_fd_, stderr_fd_;
  bool exited_ = false;
  int status_ = 0;
  Clock::time_point deadline_;
  std::chrono::milliseconds timeout_;
  int default_slots_;
  std::string output_, stderr_text_;
  std::optional<std::vector<HostSlots>> hosts_;
  std::string error_;
};

}  // namespace runrun::launcher
