#pragma once
// Why: the elastic driver (elastic_driver.h) is one loop over one state. Its parts are files of
// one concept each sharing this state: elastic_driver_state.cc (starting and stopping workers,
// what was lost), elastic_generations.cc (deciding and publishing a generation),
// elastic_events.cc (what calls for one: a worker's end, a rank's failure report, a member that
// never joins), elastic_driver_discovery.cc (the discovery script, run without blocking), and
// elastic_driver.cc (the loop, the signals, how the job ends).
// Thread-safety: none; everything runs on the driver's single loop (the main thread).

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "launcher/elastic/elastic_discovery.h"
#include "launcher/elastic/elastic_driver.h"
#include "launcher/elastic/elastic_hosts.h"
#include "launcher/elastic/elastic_worker_process.h"
#include "launcher/processes/output_router.h"
#include "rendezvous/client.h"

namespace runrun::launcher {

// How long the driver lets a change settle before publishing a generation (a host's ranks die
// within moments of each other: one new generation, not one per rank), how often it looks for
// ranks' failure reports and runs the discovery script, and the bound of one discovery run.
inline constexpr std::chrono::milliseconds kElasticSettle{250};
inline constexpr std::chrono::milliseconds kElasticStorePoll{100};
inline constexpr std::chrono::milliseconds kDiscoveryInterval{1000};
inline constexpr std::chrono::milliseconds kDiscoveryTimeout{10000};

struct ElasticDriver {
  using Clock = ElasticClock;

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
  // The last generation each worker was seen to join (by id; absent: none yet).
  std::map<int, uint64_t> joined_generation;
  int resets = 0;
  std::vector<std::string> lost;  // "worker 3 (rank 1 of generation 2) on host a: exit code 9"
  bool change_pending = false;
  Clock::time_point change_at{}, next_store_poll{}, next_discovery{};
  std::unique_ptr<DiscoveryRun> discovery;  // the script's run in progress, if any
  std::set<std::string> refused_hosts;      // remote hosts a loopback-only job cannot take
  Clock::time_point below_min_since{};      // when fewer than min-np could run; {} when not
  bool finishing = false;                   // a worker finished its script: no more generations
  uint64_t finished_generation = 0;         // the generation it finished in (0: not known)
  Clock::time_point finish_deadline{};
  std::string failure;  // why the job is ending in failure; "" when it is not
  int stop_signal = 0;
  bool stopping = false;

  explicit ElasticDriver(const ElasticJobSettings& s);

  std::vector<ElasticWorkerProcess*> running();
  bool all_exited() const;
  std::string host_name(int host) const { return hosts.at(host).name; }
  bool has_discovery() const { return !elastic.discovery_script.empty(); }
  // A change of membership is due `kElasticSettle` after the first of a burst of events.
  void schedule_change(Clock::time_point now) {
    if (!change_pending) change_at = now + kElasticSettle;
    change_pending = true;
  }
};

// elastic_driver_state.cc: the workers.
int rank_in_generation(const ElasticDriver& driver, int id);
void start_worker(ElasticDriver& driver, int host);
void begin_stop(ElasticDriver& driver, ElasticWorkerProcess& worker);
void stop_everything(ElasticDriver& driver);
std::vector<PlannedWorker> planned_running(ElasticDriver& driver);
std::string lost_summary(const ElasticDriver& driver);

// elastic_generations.cc: publishes a generation of `running` (rank order, assignments, then
// the generation number); applies a pending change (stops and starts workers by the plan, then
// publishes, or waits for hosts, or ends the job through `driver.failure`).
void publish(ElasticDriver& driver, const std::vector<ElasticWorkerProcess*>& running);
void apply_change(ElasticDriver& driver, ElasticClock::time_point now);

// elastic_events.cc: the events that call for a new generation.
void reap(ElasticDriver& driver, ElasticClock::time_point now);
void poll_store(ElasticDriver& driver, ElasticClock::time_point now);
void check_deadlines(ElasticDriver& driver, ElasticClock::time_point now);

// elastic_driver_discovery.cc: starts a discovery run when one is due, takes the hosts of one
// that ended (or reports its failure, keeping the hosts found before).
void step_discovery(ElasticDriver& driver, ElasticClock::time_point now);

}  // namespace runrun::launcher
