#include <cstdio>

#include "launcher/elastic/elastic_driver_state.h"
#include "rendezvous/elastic_keys.h"

namespace runrun::launcher {

using Clock = ElasticClock;
using std::chrono::seconds;

void publish(ElasticDriver& driver, const std::vector<ElasticWorkerProcess*>& running) {
  std::vector<PlannedWorker> planned;
  for (const auto* worker : running) planned.push_back({worker->id, worker->host});
  planned = rank_order(std::move(planned));
  const uint64_t generation = driver.generation + 1;
  const int size = static_cast<int>(planned.size());
  driver.members.clear();
  for (int rank = 0; rank < size; ++rank) {
    const auto& worker = planned[static_cast<std::size_t>(rank)];
    driver.store.set(generation, rendezvous::elastic_assignment_key(std::to_string(worker.id)),
                     rendezvous::format_assignment({generation, rank, size, worker.host}));
    driver.members.push_back(worker.id);
  }
  std::map<int, int> per_host;
  for (const auto& worker : planned) ++per_host[worker.host];
  std::string where;
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

void apply_change(ElasticDriver& driver, Clock::time_point now) {
  driver.change_pending = false;
  const bool allow_new = driver.has_discovery() || driver.generation == 0;
  const MembershipPlan plan =
      plan_membership(driver.hosts, planned_running(driver), driver.elastic.max_np, allow_new, now,
                      driver.elastic.keep_failed_hosts);
  for (int id : plan.stop) begin_stop(driver, *driver.workers.at(id));
  for (int host : plan.start_on) start_worker(driver, host);
  const auto members = driver.running();
  const int count = static_cast<int>(members.size());
  const int min_np = driver.elastic.min_np;
  const int timeout_s = driver.elastic.elastic_timeout_s;
  if (count < min_np) {
    if (driver.below_min_since == Clock::time_point{}) driver.below_min_since = now;
    const bool can_grow = driver.has_discovery();
    const auto waited = now - driver.below_min_since;
    if (can_grow && waited < seconds(timeout_s)) {
      if (driver.generation > 0 || waited == Clock::duration::zero()) {
        std::fprintf(stderr,
                     "runrun: elastic: %d rank%s can run, fewer than --min-np %d: "
                     "waiting up to %d s for hosts\n",
                     count, count == 1 ? "" : "s", min_np, timeout_s);
      }
      return;  // the next discovery (or the deadline check) tries again
    }
    driver.failure = "only " + std::to_string(count) + " rank" + (count == 1 ? "" : "s") +
                     " can run, fewer than --min-np " + std::to_string(min_np) +
                     (can_grow ? " for --elastic-timeout " + std::to_string(timeout_s) + " s"
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

}  // namespace runrun::launcher
