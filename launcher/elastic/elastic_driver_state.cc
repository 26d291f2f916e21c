#include "launcher/elastic/elastic_driver_state.h"

#include <cstdio>

namespace runrun::launcher {

ElasticDriver::ElasticDriver(const ElasticJobSettings& s)
    : settings(s),
      elastic(s.options.elastic),
      router(stdout, stderr, s.options.output_dir, s.options.num_proc, s.options.verbose,
             s.options.timestamp_output),
      store(s.store),
      hosts(CooldownRange{std::chrono::seconds(s.options.elastic.cooldown_min_s),
                          std::chrono::seconds(s.options.elastic.cooldown_max_s)}) {}

std::vector<ElasticWorkerProcess*> ElasticDriver::running() {
  std::vector<ElasticWorkerProcess*> out;
  for (auto& [id, worker] : workers) {
    if (!worker->exited && !worker->stopping) out.push_back(worker.get());
  }
  return out;
}

bool ElasticDriver::all_exited() const {
  return std::all_of(workers.begin(), workers.end(),
                     [](const auto& entry) { return entry.second->exited; });
}

int rank_in_generation(const ElasticDriver& driver, int id) {
  const auto it = std::find(driver.members.begin(), driver.members.end(), id);
  return it == driver.members.end() ? -1 : static_cast<int>(it - driver.members.begin());
}

void start_worker(ElasticDriver& driver, int host) {
  const int id = driver.next_id++;
  const ElasticHost& known = driver.hosts.at(host);
  auto worker = std::make_unique<ElasticWorkerProcess>();
  worker->id = id;
  worker->host = host;
  worker->start(settings_for_worker(driver.settings, known.name,
                                    driver.settings.local.is_local(known.name), id));
  if (driver.settings.options.verbose) {
    std::fprintf(stderr, "runrun: elastic: started worker %d on host %s\n", id, known.name.c_str());
  }
  driver.workers[id] = std::move(worker);
}

void begin_stop(ElasticDriver& driver, ElasticWorkerProcess& worker) {
  worker.request_stop(ElasticClock::now() + std::chrono::seconds(driver.settings.stop_grace_s));
}

void stop_everything(ElasticDriver& driver) {
  if (driver.stopping) return;
  driver.stopping = true;
  driver.discovery.reset();  // a discovery run in progress is killed
  for (auto& [id, worker] : driver.workers) {
    if (!worker->exited) begin_stop(driver, *worker);
  }
}

std::vector<PlannedWorker> planned_running(ElasticDriver& driver) {
  std::vector<PlannedWorker> running;
  for (const auto* worker : driver.running()) running.push_back({worker->id, worker->host});
  return running;
}

std::string lost_summary(const ElasticDriver& driver) {
  if (driver.lost.empty()) return "nothing was lost";
  std::string text = "lost: ";
  for (std::size_t i = 0; i < driver.lost.size(); ++i) text += (i ? "; " : "") + driver.lost[i];
  return text;
}

}  // namespace runrun::launcher
