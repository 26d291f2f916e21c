#include "launcher/elastic_driver.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "common/env_names.h"
#include "common/errors.h"
#include "launcher/elastic_hosts.h"
#include "launcher/elastic_worker_process.h"
#include "launcher/output_router.h"
#include "launcher/supervisor.h"
#include "rendezvous/elastic_keys.h"

namespace runrun::launcher {
namespace {

using Clock = ElasticClock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// How long the driver lets a change settle before publishing a generation (a host's ranks die
// within moments of each other: one new generation, not one per rank), how often it looks for
// ranks' failure reports and runs the discovery script.
constexpr milliseconds kSettle{250};
constexpr milliseconds kStorePoll{100};
constexpr milliseconds kDiscoveryInterval{1000};
constexpr double kDiscoveryTimeoutS = 10;

struct Driver {
  const ElasticJobSettings& settings;
  const ElasticOptions& elastic;
  OutputRouter router;
  rendezvous::RendezvousClient store;
  ElasticHostTable hosts;
  std::map<int, std::unique_ptr<ElasticWorkerProcess>> workers;  // by id; ended ones too
  int next_id = 0;
  uint64_t generation = 0;
  std::vector<int> members;  // worker ids of the current generation, in rank order
  // Members that have not taken their assignment in the current generation, with the time of
  // the first generation they were expected in since they last joined one.
  std::map<int, Clock::time_point> not_joined;
  int resets = 0;
  std::vector<std::string> lost;  // "worker 3 (rank 1 of generation 2) on host a: exit code 9"
  bool change_pending = false;
  Clock::time_point change_at{}, next_store_poll{}, next_discovery{};
  Clock::time_point below_min_since{};  // when fewer than min-np could run; {} when not
  bool finishing = false;  // a worker finished its script: no more generations
  Clock::time_point finish_deadline{};
  std::string failure;  // why the job is ending in failure; "" when it is not
  int stop_signal = 0;
  bool stopping = false;

  explicit Driver(const ElasticJobSettings& s)
      : settings(s),
        elastic(s.options.elastic),
        router(stdout, stderr, s.options.output_dir,
               s.options.num_proc, s.options.verbose),
        store(s.store) {}

  std::vector<ElasticWorkerProcess*> running() {
    std::vector<ElasticWorkerProcess*> out;
    for (auto& [id, worker] : workers) {
      if (!worker->exited && !worker->stopping) out.push_back(worker.get());
    }
    return out;
  }
  bool all_exited() const {
    return std::all_of(workers.begin(), workers.end(),
                       [](const auto& entry) { return entry.second->exited; });
  }
  std::string host_name(int host) const { return hosts.at(host).name; }
  void schedule_change(Clock::time_point now) {
    if (!change_pending) change_at = now + kSettle;
    change_pending = true;
  }
};

int rank_in_generation(const Driver& driver, int id) {
  const auto it = std::find(driver.members.begin(), driver.members.end(), id);
  return it == driver.members.end() ? -1 : static_cast<int>(it - driver.members.begin());
}

void start_worker(Driver& driver, int host) {
  const int id = driver.next_id++;
  const ElasticHost& known = driver.hosts.at(host);
  auto worker = std::make_unique<ElasticWorkerProcess>();
  worker->id = id;
  worker->host = host;
  worker->start(settings_for_worker(driver.settings, known.name,
                                    driver.settings.local.is_local(known.name), id));
  if (driver.settings.options.verbose) {
    std::fprintf(stderr, "runrun: elastic: started worker %d on host %s\n", id,
                 known.name.c_str());
  }
  driver.workers[id] = std::move(worker);
}

void begin_stop(Driver& driver, ElasticWorkerProcess& worker) {
  worker.request_stop(Clock::now() + seconds(driver.settings.stop_grace_s));
}

// Publishes a generation of the workers running now: rank order, assignments, then the
// generation number (elastic_keys.h: assignments first).
void publish(Driver& driver, const std::vector<ElasticWorkerProcess*>& running) {
  std::vector<PlannedWorker> planned;
  for (const auto* worker : running) planned.push_back({worker->id, worker->host});
  planned = rank_order(std::move(planned));
  const uint64_t generation = driver.generation + 1;
  const int size = static_cast<int>(planned.size());
  driver.members.clear();
  std::string where;
  for (int rank = 0; rank < size; ++rank) {
    const auto& worker = planned[static_cast<std::size_t>(rank)];
    driver.store.set(generation, rendezvous::elastic_assignment_key(std::to_string(worker.id)),
                     rendezvous::format_assignment({generation, rank, size, worker.host}));
    driver.members.push_back(worker.id);
  }
  std::map<int, int> per_host;
  for (const auto& worker : planned) ++per_host[worker.host];
  for (const auto& [host, count] : per_host) {
    where += (where.empty() ? "" : ",") + driver.host_name(host) + ":" + std::to_string(count);
  }
  driver.store.set(rendezvous::kElasticControlGeneration, rendezvous::kElasticGenerationKey,
                   std::to_string(generation));
  driver.generation = generation;
  const auto now = Clock::now();
  for (int id : driver.members) driver.not_joined.emplace(id, now);  // keeps an older time
  std::fprintf(stderr, "runrun: elastic: generation %llu: %d rank%s on %s\n",
               static_cast<unsigned long long>(generation), size, size == 1 ? "" : "s",
               where.c_str());
}

std::string lost_summary(const Driver& driver) {
  if (driver.lost.empty()) return "nothing was lost";
  std::string text = "lost: ";
  for (std::size_t i = 0; i < driver.lost.size(); ++i) text += (i ? "; " : "") + driver.lost[i];
  return text;
}

// Applies a pending change: stops and starts workers by the plan, then publishes a generation,
// or waits for hosts, or ends the job.
void apply_change(Driver& driver, Clock::time_point now) {
  driver.change_pending = false;
  std::vector<PlannedWorker> running;
  for (const auto* worker : driver.running()) running.push_back({worker->id, worker->host});
  const bool allow_new = !driver.elastic.discovery_script.empty() || driver.generation == 0;
  const MembershipPlan plan =
      plan_membership(driver.hosts, running, driver.elastic.max_np, allow_new, now);
  for (int id : plan.stop) begin_stop(driver, *driver.workers.at(id));
  for (int host : plan.start_on) start_worker(driver, host);
  const auto members = driver.running();
  const int count = static_cast<int>(members.size());
  if (count < driver.elastic.min_np) {
    if (driver.below_min_since == Clock::time_point{}) driver.below_min_since = now;
    const bool can_grow = !driver.elastic.discovery_script.empty();
    const auto waited = now - driver.below_min_since;
    if (can_grow && waited < seconds(driver.elastic.elastic_timeout_s)) {
      if (driver.generation > 0 || waited == Clock::duration::zero()) {
        std::fprintf(stderr, "runrun: elastic: %d rank%s can run, fewer than --min-np %d: "
                             "waiting up to %d s for hosts\n",
                     count, count == 1 ? "" : "s", driver.elastic.min_np,
                     driver.elastic.elastic_timeout_s);
      }
      return;  // the next discovery (or the deadline check) tries again
    }
    driver.failure = "only " + std::to_string(count) + " rank" + (count == 1 ? "" : "s") +
                     " can run, fewer than --min-np " + std::to_string(driver.elastic.min_np) +
                     (can_grow ? " for --elastic-timeout " +
                                     std::to_string(driver.elastic.elastic_timeout_s) + " s"
                               : " (no --host-discovery-script to find more hosts)") +
                     "; " + lost_summary(driver);
    return;
  }
  driver.below_min_since = {};
  if (driver.generation > 0) {
    ++driver.resets;
    if (driver.elastic.reset_limit >= 0 && driver.resets > driver.elastic.reset_limit) {
      driver.failure = "the job was reset " + std::to_string(driver.resets) +
                       " times, more than --reset-limit " +
                       std::to_string(driver.elastic.reset_limit) + "; " + lost_summary(driver);
      return;
    }
  }
  publish(driver, members);
}

// A worker process ended (its wait status is known).
void on_worker_end(Driver& driver, ElasticWorkerProcess& worker, Clock::time_point now) {
  const int rank = rank_in_generation(driver, worker.id);
  const std::string ended = worker.describe_end();
  if (worker.stopping) return;  // the driver stopped it
  if (worker.exit_code() == 0) {
    if (!driver.finishing) {
      driver.finishing = true;
      driver.finish_deadline = now + seconds(driver.elastic.elastic_timeout_s);
    }
    return;
  }
  driver.lost.push_back("worker " + std::to_string(worker.id) +
                        (rank >= 0 ? " (rank " + std::to_string(rank) + " of generation " +
                                         std::to_string(driver.generation) + ")"
                                   : std::string()) +
                        " on host " + driver.host_name(worker.host) + ": " + ended);
  if (driver.finishing) {
    if (driver.failure.empty()) {
      driver.failure = "a worker failed after the job's script finished on another; " +
                       lost_summary(driver);
    }
    return;
  }
  const auto cooldown = driver.hosts.record_failure(worker.host, now);
  std::fprintf(stderr, "runrun: elastic: %s; host %s gets no new worker for %lld s\n",
               driver.lost.back().c_str(), driver.host_name(worker.host).c_str(),
               static_cast<long long>(cooldown.count()));
  driver.schedule_change(now);
}

void reap(Driver& driver, Clock::time_point now) {
  for (auto& [id, worker] : driver.workers) {
    if (worker->exited) continue;
    if (worker->reap()) on_worker_end(driver, *worker, now);
  }
}

void stop_everything(Driver& driver) {
  if (driver.stopping) return;
  driver.stopping = true;
  for (auto& [id, worker] : driver.workers) {
    if (!worker->exited) begin_stop(driver, *worker);
  }
}

void handle_signals(Driver& driver, int signal_fd) {
  signalfd_siginfo info{};
  while (read(signal_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    const int sig = static_cast<int>(info.ssi_signo);
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

// Did a rank of the current generation report a failed collective (elastic_keys.h)?
void poll_store(Driver& driver, Clock::time_point now) {
  driver.next_store_poll = now + kStorePoll;
  if (driver.generation == 0 || driver.change_pending) return;
  for (auto it = driver.not_joined.begin(); it != driver.not_joined.end();) {
    const auto& worker = *driver.workers.at(it->first);
    const bool gone = worker.exited || worker.stopping;
    if (gone || driver.store.check(driver.generation, {rendezvous::elastic_joined_key(
                                                          std::to_string(it->first))})) {
      it = driver.not_joined.erase(it);
    } else {
      ++it;
    }
  }
  if (driver.store.get(rendezvous::kElasticControlGeneration,
                       rendezvous::elastic_failed_key(driver.generation))) {
    if (driver.settings.options.verbose) {
      std::fprintf(stderr, "runrun: elastic: a rank reported a failure in generation %llu\n",
                   static_cast<unsigned long long>(driver.generation));
    }
    driver.schedule_change(now);
  }
}

void run_discovery(Driver& driver, Clock::time_point now) {
  driver.next_discovery = now + kDiscoveryInterval;
  std::vector<HostSlots> found;
  try {
    found = discover_hosts(driver.elastic.discovery_script, kDiscoveryTimeoutS);
  } catch (const Error& error) {
    std::fprintf(stderr, "runrun: elastic: %s (keeping the hosts found before)\n", error.what());
    return;
  }
  driver.hosts.update(found);
  // A change of membership (a host gone or new, more or fewer slots, a cooldown that ended)
  // makes a new generation; a change that moves no worker does not.
  std::vector<PlannedWorker> running;
  for (const auto* worker : driver.running()) running.push_back({worker->id, worker->host});
  const auto plan = plan_membership(driver.hosts, running, driver.elastic.max_np, true, now);
  if (!plan.stop.empty() || !plan.start_on.empty()) {
    if (driver.settings.options.verbose) {
      std::fprintf(stderr, "runrun: elastic: the hosts changed: %zu worker(s) to stop, %zu to "
                           "start\n", plan.stop.size(), plan.start_on.size());
    }
    driver.schedule_change(now);
  }
}

void check_deadlines(Driver& driver, Clock::time_point now) {
  for (auto& [id, worker] : driver.workers) {
    if (worker->exited) continue;
    if (worker->stopping && now >= worker->kill_deadline) worker->kill_now();
    if (!worker->stopping && !worker->started &&
        now >= worker->start_deadline) {
      driver.lost.push_back("worker " + std::to_string(id) + " on host " +
                            driver.host_name(worker->host) + ": not started within " +
                            "--start-timeout " +
                            std::to_string(driver.settings.options.start_timeout_s) + " s");
      driver.hosts.record_failure(worker->host, now);
      begin_stop(driver, *worker);
      driver.schedule_change(now);
    }
  }
  // A member that never took its place (a hung process, a host that stopped answering) would
  // keep every other rank waiting: it is stopped, and the next generation goes on without it.
  if (!driver.finishing) {
    bool stopped = false;
    for (auto it = driver.not_joined.begin(); it != driver.not_joined.end();) {
      auto& worker = *driver.workers.at(it->first);
      if (worker.exited || worker.stopping ||
          now < it->second + seconds(driver.elastic.elastic_timeout_s)) {
        ++it;
        continue;
      }
      driver.lost.push_back("worker " + std::to_string(it->first) + " on host " +
                            driver.host_name(worker.host) + ": did not join generation " +
                            std::to_string(driver.generation) + " within --elastic-timeout " +
                            std::to_string(driver.elastic.elastic_timeout_s) + " s");
      std::fprintf(stderr, "runrun: elastic: %s: stopping it\n", driver.lost.back().c_str());
      driver.hosts.record_failure(worker.host, now);
      begin_stop(driver, worker);
      it = driver.not_joined.erase(it);
      stopped = true;
    }
    if (stopped) driver.schedule_change(now);
  }
  if (driver.finishing && now >= driver.finish_deadline && driver.failure.empty()) {
    driver.failure = "a worker finished the script but others were still running " +
                     std::to_string(driver.elastic.elastic_timeout_s) +
                     " s later (--elastic-timeout)";
  }
  if (!driver.elastic.discovery_script.empty() && driver.below_min_since != Clock::time_point{} &&
      now - driver.below_min_since >= seconds(driver.elastic.elastic_timeout_s)) {
    driver.schedule_change(now);  // apply_change ends the job
    driver.change_at = now;
  }
}

int next_timeout_ms(const Driver& driver, Clock::time_point now) {
  std::vector<Clock::time_point> due;
  if (!driver.stopping) {
    due.push_back(driver.next_store_poll);
    if (!driver.elastic.discovery_script.empty()) due.push_back(driver.next_discovery);
    if (driver.change_pending) due.push_back(driver.change_at);
  }
  for (const auto& [id, worker] : driver.workers) {
    if (worker->exited) continue;
    due.push_back(worker->stopping ? worker->kill_deadline : worker->start_deadline);
  }
  if (due.empty()) return 200;
  const auto left = *std::min_element(due.begin(), due.end()) - now;
  const auto ms = std::chrono::duration_cast<milliseconds>(left).count();
  return static_cast<int>(std::clamp<long long>(ms + 1, 0, 1000));
}

void pump_output(Driver& driver, std::vector<pollfd>& fds,
                 const std::vector<std::pair<ElasticWorkerProcess*, bool>>& owners) {
  for (std::size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    auto [worker, from_stderr] = owners[i - 1];
    worker->pump(driver.router, from_stderr);
  }
  for (const RankEvent& event : driver.router.take_events()) {
    const auto it = driver.workers.find(event.rank);
    if (it != driver.workers.end() && event.kind == RankEvent::Kind::kStarted) {
      it->second->started = true;
    }
  }
}

void run_loop(Driver& driver, int signal_fd) {
  for (;;) {
    const auto now = Clock::now();
    if (driver.all_exited() && (driver.stopping || driver.finishing)) break;
    std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
    std::vector<std::pair<ElasticWorkerProcess*, bool>> owners;
    for (auto& [id, worker] : driver.workers) {
      for (bool from_stderr : {false, true}) {
        const int fd = worker->output_fd(from_stderr);
        if (fd < 0) continue;
        fds.push_back({fd, POLLIN, 0});
        owners.emplace_back(worker.get(), from_stderr);
      }
    }
    if (poll(fds.data(), fds.size(), next_timeout_ms(driver, now)) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) handle_signals(driver, signal_fd);
    pump_output(driver, fds, owners);
    const auto later = Clock::now();
    reap(driver, later);
    if (!driver.stopping) {
      try {
        if (later >= driver.next_store_poll) poll_store(driver, later);
        if (!driver.elastic.discovery_script.empty() && !driver.finishing &&
            later >= driver.next_discovery) {
          run_discovery(driver, later);
        }
        check_deadlines(driver, later);
        if (driver.change_pending && !driver.finishing && later >= driver.change_at) {
          apply_change(driver, later);
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
    } else {
      check_deadlines(driver, later);
    }
  }
  for (auto& [id, worker] : driver.workers) worker->finish(driver.router);
  driver.router.finish();
}

int report(Driver& driver) {
  if (driver.stop_signal != 0) {
    std::fprintf(stderr, "runrun: stopped by %s; every rank was stopped\n",
                 strsignal(driver.stop_signal));
    return 128 + driver.stop_signal;
  }
  if (!driver.failure.empty()) {
    std::fprintf(stderr, "runrun: elastic job failed: %s\n", driver.failure.c_str());
    return kExitLauncherFailure;
  }
  std::fprintf(stderr, "runrun: elastic: the job finished in generation %llu (%d reset%s)\n",
               static_cast<unsigned long long>(driver.generation), driver.resets,
               driver.resets == 1 ? "" : "s");
  return 0;
}

}  // namespace

std::vector<HostSlots> discover_hosts(const std::string& script, double timeout_s) {
  const auto runs = run_all_captured({{"/bin/sh", "-c", script}}, timeout_s);
  const CapturedRun& run = runs.front();
  if (!run.started || run.timed_out || run.exit_code != 0) {
    throw InvalidArgumentError(
        RUNRUN_WHERE,
        "--host-discovery-script '" + script + "' " +
            (!run.started ? "could not start: " + run.error
             : run.timed_out ? "did not finish within " +
                                   std::to_string(static_cast<int>(timeout_s)) + " s"
                             : "exited with status " + std::to_string(run.exit_code)));
  }
  return parse_hostfile(run.output, "--host-discovery-script output");
}

int run_elastic_job(const ElasticJobSettings& settings) {
  sigset_t mask, previous;
  sigemptyset(&mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&mask, sig);
  sigprocmask(SIG_BLOCK, &mask, &previous);
  const int signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  struct sigaction ignore_pipe {}, previous_pipe {};
  ignore_pipe.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore_pipe, &previous_pipe);
  int exit_code = kExitLauncherFailure;
  std::unique_ptr<Driver> driver;
  try {
    driver = std::make_unique<Driver>(settings);
    driver->hosts.update(settings.options.hosts);
    // The first generation: -np workers on the hosts in order (the plan's max is -np).
    std::vector<PlannedWorker> none;
    const auto first = plan_membership(driver->hosts, none, settings.options.num_proc, true,
                                       Clock::now());
    for (int host : first.start_on) start_worker(*driver, host);
    publish(*driver, driver->running());
    driver->next_discovery = Clock::now() + kDiscoveryInterval;
    run_loop(*driver, signal_fd);
    exit_code = report(*driver);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "runrun: %s\n", error.what());
    if (driver) {
      for (auto& [id, worker] : driver->workers) worker->kill_now();
      for (auto& [id, worker] : driver->workers) worker->wait_blocking();
    }
  }
  sigaction(SIGPIPE, &previous_pipe, nullptr);
  close(signal_fd);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  return exit_code;
}

}  // namespace runrun::launcher
