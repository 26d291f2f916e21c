// The elastic driver's loop: polls the workers' output, the signals and the discovery script's
// run; reaps workers; asks the store for the ranks' reports; applies changes; ends the job.
#include "launcher/elastic/elastic_driver.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/errors.h"
#include "launcher/elastic/elastic_driver_state.h"
#include "launcher/processes/signal_scope.h"
#include "launcher/processes/supervisor.h"

namespace runrun::launcher {
namespace {

using Clock = ElasticClock;
using std::chrono::milliseconds;

void handle_signals(ElasticDriver& driver, ScopedSignalFd& signals) {
  for (const int sig : signals.take()) {
    if (sig == SIGCHLD) continue;
    if (driver.stopping && driver.stop_signal != 0) {
      std::fprintf(stderr, "runrun: second stop request: killing every worker\n");
      for (auto& [id, worker] : driver.workers) worker->kill_now();
      continue;
    }
    std::fprintf(stderr, "runrun: got %s: stopping every rank\n", strsignal(sig));
    if (driver.stop_signal == 0) driver.stop_signal = sig;
    stop_everything(driver);
  }
}

int next_timeout_ms(const ElasticDriver& driver, Clock::time_point now) {
  std::vector<Clock::time_point> due;
  if (!driver.stopping) {
    due.push_back(driver.next_store_poll);
    if (driver.discovery) {
      due.push_back(driver.discovery->deadline());
    } else if (driver.has_discovery()) {
      due.push_back(driver.next_discovery);
    }
    if (driver.change_pending) due.push_back(driver.change_at);
  }
  for (const auto& [id, worker] : driver.workers) {
    if (worker->exited) continue;
    due.push_back(worker->stopping ? worker->kill_deadline : worker->start_deadline);
  }
  if (due.empty()) return 200;
  const auto left = *std::min_element(due.begin(), due.end()) - now;
  const auto ms = std::chrono::duration_cast<milliseconds>(left).count();
  // At most 1 s, and a child's end (SIGCHLD on the signal fd) wakes the loop at once.
  return static_cast<int>(std::clamp<long long>(ms + 1, 0, 1000));
}

// What the loop polls: the signal fd, every worker's output pipes, the discovery run's.
struct PollSet {
  std::vector<pollfd> fds;
  std::vector<std::pair<ElasticWorkerProcess*, bool>> owners;  // per worker pipe
  std::size_t discovery_at = 0;  // index of the discovery run's first pipe; 0: none
};

PollSet poll_set(ElasticDriver& driver, int signal_fd) {
  PollSet set;
  set.fds.push_back({signal_fd, POLLIN, 0});
  for (auto& [id, worker] : driver.workers) {
    for (bool from_stderr : {false, true}) {
      const int fd = worker->output_fd(from_stderr);
      if (fd < 0) continue;
      set.fds.push_back({fd, POLLIN, 0});
      set.owners.emplace_back(worker.get(), from_stderr);
    }
  }
  if (driver.discovery) {
    set.discovery_at = set.fds.size();
    for (bool from_stderr : {false, true}) {
      set.fds.push_back({driver.discovery->output_fd(from_stderr), POLLIN, 0});  // -1: skipped
    }
  }
  return set;
}

void pump_output(ElasticDriver& driver, const PollSet& set) {
  for (std::size_t i = 0; i < set.owners.size(); ++i) {
    if (set.fds[i + 1].revents == 0) continue;
    auto [worker, from_stderr] = set.owners[i];
    worker->pump(driver.router, from_stderr);
  }
  if (set.discovery_at != 0 && driver.discovery) {
    for (std::size_t k = 0; k < 2; ++k) {
      if (set.fds[set.discovery_at + k].revents != 0) driver.discovery->pump(k == 1);
    }
  }
  for (const RankEvent& event : driver.router.take_events()) {
    const auto it = driver.workers.find(event.rank);
    if (it != driver.workers.end() && event.kind == RankEvent::Kind::kStarted) {
      it->second->started = true;
    }
  }
}

// One pass of the driver's decisions, after the events of one poll.
void decide(ElasticDriver& driver, Clock::time_point now) {
  try {
    if (now >= driver.next_store_poll) poll_store(driver, now);
    step_discovery(driver, now);
    check_deadlines(driver, now);
    if (driver.change_pending && !driver.finishing && now >= driver.change_at) {
      apply_change(driver, now);
    }
  } catch (const Error& error) {
    driver.failure = std::string("the elastic driver failed: ") + error.what();
  }
  if (!driver.failure.empty()) stop_everything(driver);
  if (driver.running().empty() && !driver.finishing && driver.failure.empty() &&
      !driver.change_pending && driver.below_min_since == Clock::time_point{}) {
    driver.failure = "no worker is running; " + lost_summary(driver);
    stop_everything(driver);
  }
}

void run_loop(ElasticDriver& driver, ScopedSignalFd& signals) {
  for (;;) {
    const auto now = Clock::now();
    if (driver.all_exited() && (driver.stopping || driver.finishing)) break;
    PollSet set = poll_set(driver, signals.fd());
    if (poll(set.fds.data(), set.fds.size(), next_timeout_ms(driver, now)) < 0 && errno != EINTR) {
      break;
    }
    if (set.fds[0].revents != 0) handle_signals(driver, signals);
    pump_output(driver, set);
    const auto later = Clock::now();
    reap(driver, later);
    if (driver.stopping) {
      check_deadlines(driver, later);
    } else {
      decide(driver, later);
    }
  }
  driver.discovery.reset();
  for (auto& [id, worker] : driver.workers) worker->finish(driver.router);
  driver.router.finish();
}

int report(ElasticDriver& driver) {
  if (driver.stop_signal != 0) {
    std::fprintf(stderr, "runrun: stopped by %s; every rank was stopped\n",
                 strsignal(driver.stop_signal));
    return 128 + driver.stop_signal;
  }
  if (!driver.failure.empty()) {
    std::fprintf(stderr, "runrun: elastic job failed: %s\n", driver.failure.c_str());
    return kExitLauncherFailure;
  }
  const uint64_t finished_in =
      driver.finished_generation != 0 ? driver.finished_generation : driver.generation;
  std::fprintf(stderr, "runrun: elastic: the job finished in generation %llu (%d reset%s)\n",
               static_cast<unsigned long long>(finished_in), driver.resets,
               driver.resets == 1 ? "" : "s");
  return 0;
}

}  // namespace

int run_elastic_job(const ElasticJobSettings& settings) {
  ScopedSignalFd signals({SIGINT, SIGTERM, SIGHUP, SIGCHLD});
  const ScopedIgnoredSignal ignore_pipe(SIGPIPE);
  int exit_code = kExitLauncherFailure;
  std::unique_ptr<ElasticDriver> driver;
  try {
    driver = std::make_unique<ElasticDriver>(settings);
    driver->hosts.update(settings.options.hosts);
    // The first generation: -np workers on the hosts in order (the plan's max is -np).
    const auto first =
        plan_membership(driver->hosts, {}, settings.options.num_proc, true, Clock::now());
    for (int host : first.start_on) start_worker(*driver, host);
    publish(*driver, driver->running());
    driver->next_discovery = Clock::now() + kDiscoveryInterval;
    run_loop(*driver, signals);
    exit_code = report(*driver);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "runrun: %s\n", error.what());
    if (driver) {
      driver->discovery.reset();
      for (auto& [id, worker] : driver->workers) worker->kill_now();
      for (auto& [id, worker] : driver->workers) worker->wait_blocking();
    }
  }
  return exit_code;
}

}  // namespace runrun::launcher
