#include <cstdio>

#include "launcher/elastic/elastic_driver_state.h"
#include "rendezvous/elastic_keys.h"

namespace runrun::launcher {
namespace {

using Clock = ElasticClock;
using std::chrono::seconds;

// A worker finished the script in generation `finished_in`, before it joined the current one:
// the current generation can never form. Its members that were not in `finished_in` with the
// finished worker (new workers, workers that went on to the current generation) wait for it in
// vain: they are stopped, not counted as failures, as Horovod stops the other workers once one
// succeeded. Those of `finished_in` are finishing the script too and get --elastic-timeout.
void stop_workers_of_an_abandoned_generation(ElasticDriver& driver,
                                             const ElasticWorkerProcess& done,
                                             uint64_t finished_in) {
  for (auto& [id, other] : driver.workers) {
    if (other->exited || other->stopping || id == done.id) continue;
    const auto joined = driver.joined_generation.find(id);
    if (joined != driver.joined_generation.end() && joined->second == finished_in) continue;
    std::fprintf(stderr,
                 "runrun: elastic: worker %d (host %s) stopped: worker %d finished the script in "
                 "generation %llu, so generation %llu, which it waits in, cannot form\n",
                 id, driver.host_name(other->host).c_str(), done.id,
                 static_cast<unsigned long long>(finished_in),
                 static_cast<unsigned long long>(driver.generation));
    begin_stop(driver, *other);
  }
}

// A worker process ended (its wait status is known).
void on_worker_end(ElasticDriver& driver, ElasticWorkerProcess& worker, Clock::time_point now) {
  const int rank = rank_in_generation(driver, worker.id);
  if (worker.stopping) return;  // the driver stopped it
  if (worker.exit_code() == 0) {
    if (!driver.finishing) {
      driver.finishing = true;
      driver.finish_deadline = now + seconds(driver.elastic.elastic_timeout_s);
      const auto joined = driver.joined_generation.find(worker.id);
      if (joined != driver.joined_generation.end()) {
        driver.finished_generation = joined->second;
        if (joined->second < driver.generation) {
          stop_workers_of_an_abandoned_generation(driver, worker, joined->second);
        }
      }
    }
    return;
  }
  driver.lost.push_back("worker " + std::to_string(worker.id) +
                        (rank >= 0 ? " (rank " + std::to_string(rank) + " of generation " +
                                         std::to_string(driver.generation) + ")"
                                   : std::string()) +
                        " on host " + driver.host_name(worker.host) + ": " + worker.describe_end());
  if (driver.finishing) {
    if (driver.failure.empty()) {
      driver.failure =
          "a worker failed after the job's script finished on another; " + lost_summary(driver);
    }
    return;
  }
  const auto cooldown = driver.hosts.record_failure(worker.host, now);
  std::fprintf(stderr, "runrun: elastic: %s; host %s gets no new worker for %lld s\n",
               driver.lost.back().c_str(), driver.host_name(worker.host).c_str(),
               static_cast<long long>(cooldown.count()));
  driver.schedule_change(now);
}

// Workers past their kill deadline (stopping) or that never started (their shim did not
// report within --start-timeout).
void check_worker_deadlines(ElasticDriver& driver, Clock::time_point now) {
  for (auto& [id, worker] : driver.workers) {
    if (worker->exited) continue;
    if (worker->stopping && now >= worker->kill_deadline) worker->kill_now();
    if (!worker->stopping && !worker->started && now >= worker->start_deadline) {
      driver.lost.push_back("worker " + std::to_string(id) + " on host " +
                            driver.host_name(worker->host) + ": not started within " +
                            "--start-timeout " +
                            std::to_string(driver.settings.options.start_timeout_s) + " s");
      driver.hosts.record_failure(worker->host, now);
      begin_stop(driver, *worker);
      driver.schedule_change(now);
    }
  }
}

// A member that never took its place (a hung process, a host that stopped answering) would keep
// every other rank waiting: it is stopped, and the next generation goes on without it.
void check_join_deadlines(ElasticDriver& driver, Clock::time_point now) {
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

}  // namespace

void reap(ElasticDriver& driver, Clock::time_point now) {
  for (auto& [id, worker] : driver.workers) {
    if (worker->exited) continue;
    if (worker->reap()) on_worker_end(driver, *worker, now);
  }
}

// Did a rank of the current generation report a failed collective (elastic_keys.h)? Which
// members took their place?
void poll_store(ElasticDriver& driver, Clock::time_point now) {
  driver.next_store_poll = now + kElasticStorePoll;
  if (driver.generation == 0 || driver.change_pending) return;
  for (auto it = driver.not_joined.begin(); it != driver.not_joined.end();) {
    const auto& worker = *driver.workers.at(it->first);
    const bool gone = worker.exited || worker.stopping;
    if (gone || driver.store.check(driver.generation,
                                   {rendezvous::elastic_joined_key(std::to_string(it->first))})) {
      if (!gone) driver.joined_generation[it->first] = driver.generation;
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

void check_deadlines(ElasticDriver& driver, Clock::time_point now) {
  check_worker_deadlines(driver, now);
  if (driver.stopping) return;
  if (!driver.finishing) check_join_deadlines(driver, now);
  if (driver.finishing && now >= driver.finish_deadline && driver.failure.empty()) {
    driver.failure = "a worker finished the script but others were still running " +
                     std::to_string(driver.elastic.elastic_timeout_s) +
                     " s later (--elastic-timeout)";
  }
  if (driver.has_discovery() && driver.below_min_since != Clock::time_point{} &&
      now - driver.below_min_since >= seconds(driver.elastic.elastic_timeout_s)) {
    driver.schedule_change(now);  // apply_change ends the job
    driver.change_at = now;
  }
}

}  // namespace runrun::launcher
