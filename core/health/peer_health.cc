#include "core/health/peer_health.h"

#include <algorithm>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "common/deadline_alarm.h"
#include "common/env_names.h"
#include "common/rank_events.h"
#include "core/negotiation/message.h"
#include "core/negotiation/stall_hint.h"
#include "core/negotiation/wire.h"
#include "ops/backend_factory.h"

namespace runrun {
namespace {

// A worker of an elastic job (the launcher sets RUNRUN_ELASTIC_WORKER): a lost peer is
// recovered from (docs/elastic.md), which the error says instead of "restart the job".
bool in_elastic_job() {
  const char* worker = std::getenv(env::kElasticWorker);
  return worker != nullptr && *worker != '\0';
}

}  // namespace

PeerHealth::PeerHealth(const Config& config, const Topology& topology, Logger logger,
                       ProcessSetRegistry& registry)
    : config_(config), topology_(topology), logger_(std::move(logger)), registry_(registry) {}

PeerHealth::~PeerHealth() { stop(); }

void PeerHealth::stop() {
  if (monitor_) monitor_->stop();
}

void PeerHealth::freeze_for_test() {
  if (monitor_) monitor_->freeze_for_test();
}

void PeerHealth::start(ControlChannel& control) {
  if (config_.peer_timeout.count() == 0 || topology_.size < 2) return;
  auto interval = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(1000),
                                                      config_.peer_timeout / 4);
  // Every rank on this host: the monitor listens on loopback only (issue 36, point 8).
  monitor_ =
      std::make_unique<PeerMonitor>(topology_.rank, topology_.size, interval, config_.peer_timeout,
                                    logger_, topology_.local_size == topology_.size);
  std::string table = exchange_addresses(control);
  WireReader reader(table);
  auto job_key = static_cast<uint64_t>(reader.i64());
  std::vector<std::string> addresses;
  for (int r = 0; r < topology_.size; ++r) addresses.push_back(reader.str());
  monitor_->set_waiting_probe([this] {
    std::shared_ptr<ProcessSetWorker> worker = registry_.find_worker(0);  // null until init ends
    return worker && worker->waiting_since().has_value();
  });
  monitor_->set_tick([this] {
    watch_for_idle_stall();
    fail_sets_of_departed_peers();
  });
  monitor_->set_on_left([this](int rank) {
    departed_.push_back({rank, false, std::chrono::steady_clock::now() + kDepartureGrace});
  });
  monitor_->set_failed_probe([this] {
    if (shutting_down_) return false;
    std::shared_ptr<ProcessSetWorker> worker = registry_.find_worker(0);  // null until init ends
    // Stopped on an error; not in a shutdown round every rank took part in (a peer's shutdown).
    return worker && !worker->running() && !worker->stopped_cleanly();
  });
  // Ranks that fail because a peer was lost say so too, up to a heartbeat after the loss: the
  // grace lets this rank see the loss itself and report that instead.
  monitor_->set_on_failed([this, interval](int rank) {
    departed_.push_back(
        {rank, true, std::chrono::steady_clock::now() + kDepartureGrace + 2 * interval});
  });
  monitor_->start(addresses, job_key, [this](int rank, PeerLoss how, const std::string& why) {
    on_peer_lost(rank, how, why);
  });
}

// Every rank got here right after the transport connected them all, so the exchange takes
// moments; it is bounded by the peer timeout all the same, because no monitor watches it yet and
// the control channel may have no timeout of its own (MPI waits for a stopped peer for ever).
std::string PeerHealth::exchange_addresses(ControlChannel& control) {
  DeadlineAlarm alarm(config_.peer_timeout, [&control] { control.abort(); });
  try {
    std::vector<std::string> gathered = control.gather(monitor_->address(), 0);
    std::string table;
    if (topology_.rank == 0) {
      WireWriter w;
      w.i64(static_cast<int64_t>(std::random_device{}()) << 32 | std::random_device{}());
      for (const std::string& address : gathered) w.str(address);
      table = w.take();
    }
    control.broadcast(table, 0);
    if (!alarm.disarm()) return table;  // else the channel was aborted just as it finished
  } catch (const Error&) {
    if (!alarm.disarm()) throw;
  }
  // Requests to the missing ranks stay posted: finalizing the transport at exit would wait.
  skip_transport_finalize();
  throw TimeoutError(
      RUNRUN_WHERE,
      "init on rank " + std::to_string(topology_.rank) +
          ": the ranks did not all exchange their "
          "peer-monitor addresses within RUNRUN_PEER_TIMEOUT=" +
          fmt::format("{:g}", static_cast<double>(config_.peer_timeout.count()) / 1000.0) +
          " s, although every rank had connected: some rank is stopped or hung inside init() (or "
          "its network was cut). Check the other ranks' output; raise RUNRUN_PEER_TIMEOUT if "
          "ranks are this slow on purpose (e.g. under a debugger).");
}

// Monitor thread, every heartbeat. The coordinator's stall inspector only sees ranks that take
// part in negotiation; a rank that enqueued nothing at all does not, so the ranks waiting for it
// detect it here, from the heartbeats that say who is waiting and who is not.
void PeerHealth::watch_for_idle_stall() {
  std::shared_ptr<ProcessSetWorker> worker = registry_.find_worker(0);
  auto since = worker ? worker->waiting_since() : std::nullopt;
  if (!since) {
    idle_stall_warned_ = false;
    return;
  }
  std::vector<int> idle = monitor_->idle_peers();
  if (idle.empty()) return;
  auto age = std::chrono::steady_clock::now() - *since;
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(age).count();
  bool warn = config_.stall_check_time.count() > 0 && age >= config_.stall_check_time;
  bool fail = config_.stall_shutdown_time.count() > 0 && age >= config_.stall_shutdown_time;
  if (!warn && !fail) return;
  std::vector<int64_t> idle64(idle.begin(), idle.end());
  std::string names;
  for (const std::string& name : worker->waiting_for()) {
    names += (names.empty() ? "'" : ", '") + name + "'";
  }
  std::string text = "stall: tensors [" + names + "] have waited " + std::to_string(seconds) +
                     " s on rank " + std::to_string(topology_.rank) + "; ranks " +
                     shape_string(idle64) +
                     " have enqueued nothing (busy elsewhere, e.g. evaluating or checkpointing on "
                     "one rank, or stuck)";
  if (fail) {
    worker->fail(ErrorCode::kTimeout, text + ". RUNRUN_STALL_SHUTDOWN_TIME=" +
                                          std::to_string(config_.stall_shutdown_time.count()) +
                                          " s passed: every op on this rank fails.");
  } else if (!idle_stall_warned_) {
    idle_stall_warned_ = true;
    logger_->warn("{}. {}", text, stall_deadline_text(config_.stall_shutdown_time, age));
  }
}

// Monitor thread, every heartbeat: peers that said goodbye (shut their runtime down) or whose
// runtime failed, a while ago, while this rank still runs. What such a peer was part of can no
// longer run anything: fail it rather than let the next op wait for a rank that is gone. The
// verdict waits a moment because survivors of a lost peer also say goodbye (or fail) as they
// exit, and the loss itself (seen at once) is the error to report.
void PeerHealth::fail_sets_of_departed_peers() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<Departure> due;
  auto not_due = std::partition(departed_.begin(), departed_.end(),
                                [&](const Departure& d) { return d.due > now; });
  due.assign(not_due, departed_.end());
  departed_.erase(not_due, departed_.end());
  for (const Departure& departure : due) {
    if (peer_lost_) return;
    if (departure.failed) {
      on_peer_failed(departure.rank);
    } else {
      on_peer_left(departure.rank);
    }
  }
}

void PeerHealth::on_peer_left(int rank) {
  if (shutting_down_) return;
  report_failure_cause(FailureCause::kPeerLeft, topology_.rank, rank);
  for (auto& [id, worker] : registry_.sets_with(rank)) {
    worker->fail(ErrorCode::kShutDown,
                 "runrun on rank " + std::to_string(topology_.rank) + ": rank " +
                     std::to_string(rank) +
                     " shut its runtime down while this rank still uses "
                     "process set " +
                     std::to_string(id) +
                     "; every pending and later op on that set fails. Make every rank run the "
                     "same ops before shutdown.");
  }
}

// The heartbeat speaks of the peer's global set only: its other sets (and this rank's sets
// with it) may still work, so only the global set fails here.
void PeerHealth::on_peer_failed(int rank) {
  if (shutting_down_) return;
  std::shared_ptr<ProcessSetWorker> global = registry_.find_worker(0);
  if (!global || !global->running()) return;  // failed already, for its own reason
  report_failure_cause(FailureCause::kPeerLost, topology_.rank, rank);
  global->fail(ErrorCode::kPeerFailure,
               "runrun on rank " + std::to_string(topology_.rank) + ": the runtime of rank " +
                   std::to_string(rank) +
                   " failed (its error is in its output): it runs no "
                   "more collectives of the global process set; every pending and later op on "
                   "that set fails.");
}

void PeerHealth::on_peer_lost(int rank, PeerLoss how, const std::string& why) {
  peer_lost_ = true;
  if (!shutting_down_) report_failure_cause(FailureCause::kPeerLost, topology_.rank, rank);
  // Even while shutting down: a silent peer may outlive every other rank, stopped or hung, and
  // the launcher stops it only if told.
  if (how == PeerLoss::kSilent) {
    report_failure_cause(FailureCause::kPeerSilent, topology_.rank, rank);
  }
  skip_transport_finalize();
  std::string message =
      "runrun on rank " + std::to_string(topology_.rank) + ": " + why +
      (in_elastic_job()
           ? ". Every pending and later op fails; the elastic job recovers: the state rolls back "
             "to its last commit and training goes on in the launcher's next generation "
             "(docs/elastic.md)."
           : ". Every pending and later op fails; shut down and restart the job "
             "(see docs/troubleshooting.md).");
  registry_.fail_all(ErrorCode::kPeerFailure, message);
}

}  // namespace runrun
