// Runtime: peer monitoring and the waiting ranks' view of stalls (see runtime.h). Runs on the
// constructing thread (start_peer_monitor) and on the peer monitor's thread (the rest).
#include <algorithm>
#include <random>

#include "core/runtime.h"
#include "core/wire.h"
#include "ops/backend_factory.h"

namespace runrun {

void Runtime::start_peer_monitor(ControlChannel& control) {
  if (config_.peer_timeout.count() == 0 || topology_.size < 2) return;
  auto interval = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(1000),
                                                      config_.peer_timeout / 4);
  peer_monitor_ = std::make_unique<PeerMonitor>(topology_.rank, topology_.size, interval,
                                                config_.peer_timeout, logger_);
  std::vector<std::string> gathered = control.gather(peer_monitor_->address(), 0);
  std::string table;
  if (topology_.rank == 0) {
    WireWriter w;
    w.i64(static_cast<int64_t>(std::random_device{}()) << 32 | std::random_device{}());
    for (const std::string& address : gathered) w.str(address);
    table = w.take();
  }
  control.broadcast(table, 0);
  WireReader reader(table);
  auto job_key = static_cast<uint64_t>(reader.i64());
  std::vector<std::string> addresses;
  for (int r = 0; r < topology_.size; ++r) addresses.push_back(reader.str());
  peer_monitor_->set_waiting_probe([this] {
    std::shared_ptr<ProcessSetWorker> worker = global_worker();  // null until init finished
    return worker && worker->waiting_since().has_value();
  });
  peer_monitor_->set_tick([this] {
    watch_for_idle_stall();
    fail_sets_of_departed_peers();
  });
  peer_monitor_->set_on_left([this](int rank) {
    departed_peers_.emplace_back(rank, std::chrono::steady_clock::now());
  });
  peer_monitor_->start(addresses, job_key, [this](int, const std::string& why) { on_peer_lost(why); });
}

std::shared_ptr<ProcessSetWorker> Runtime::global_worker() const {
  std::lock_guard<std::mutex> lock(workers_mutex_);
  auto it = workers_.find(0);
  return it == workers_.end() ? nullptr : it->second;
}

// Monitor thread, every heartbeat. The coordinator's stall inspector only sees ranks that take
// part in negotiation; a rank that enqueued nothing at all does not, so the ranks waiting for it
// detect it here, from the heartbeats that say who is waiting and who is not.
void Runtime::watch_for_idle_stall() {
  std::shared_ptr<ProcessSetWorker> worker = global_worker();
  auto since = worker ? worker->waiting_since() : std::nullopt;
  if (!since) {
    idle_stall_warned_ = false;
    return;
  }
  std::vector<int> idle = peer_monitor_->idle_peers();
  if (idle.empty()) return;
  auto age = std::chrono::steady_clock::now() - *since;
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(age).count();
  bool warn = config_.stall_check_time.count() > 0 && age >= config_.stall_check_time;
  bool fail = config_.stall_shutdown_time.count() > 0 && age >= config_.stall_shutdown_time;
  if (!warn && !fail) return;
  std::vector<int64_t> idle64(idle.begin(), idle.end());
  std::string names;
  for (const std::string& name : worker->waiting_for()) names += (names.empty() ? "'" : ", '") + name + "'";
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
    logger_->warn("{}", text);
  }
}

// Monitor thread, every heartbeat: peers that said goodbye a while ago (shut their runtime
// down) while this rank still runs. The sets that contain such a peer can no longer run
// anything: fail them rather than let the next op wait for a rank that is gone. The verdict
// waits a moment because survivors of a lost peer also say goodbye as they exit, and the loss
// itself (seen at once) is the error to report.
void Runtime::fail_sets_of_departed_peers() {
  auto now = std::chrono::steady_clock::now();
  while (!departed_peers_.empty() && now - departed_peers_.front().second >= kDepartureGrace) {
    int rank = departed_peers_.front().first;
    departed_peers_.erase(departed_peers_.begin());
    if (!peer_lost_) on_peer_left(rank);
  }
}

void Runtime::on_peer_left(int rank) {
  if (shut_down_) return;
  std::vector<std::pair<int32_t, std::shared_ptr<ProcessSetWorker>>> affected;
  {
    std::lock_guard<std::mutex> lock(workers_mutex_);
    for (auto& [id, worker] : workers_) {
      const std::vector<int>& members = process_sets_[id];
      if (std::find(members.begin(), members.end(), rank) != members.end()) {
        affected.emplace_back(id, worker);
      }
    }
  }
  for (auto& [id, worker] : affected) {
    worker->fail(ErrorCode::kShutDown,
                 "runrun on rank " + std::to_string(topology_.rank) + ": rank " +
                     std::to_string(rank) + " shut its runtime down while this rank still uses "
                     "process set " + std::to_string(id) +
                     "; every pending and later op on that set fails. Make every rank run the "
                     "same ops before shutdown.");
  }
}

void Runtime::on_peer_lost(const std::string& why) {
  peer_lost_ = true;
  skip_transport_finalize();
  std::string message = "runrun on rank " + std::to_string(topology_.rank) + ": " + why +
                        ". Every pending and later op fails; shut down and restart the job "
                        "(see docs/troubleshooting.md).";
  std::vector<std::shared_ptr<ProcessSetWorker>> workers;
  {
    std::lock_guard<std::mutex> lock(workers_mutex_);
    for (auto& [id, worker] : workers_) workers.push_back(worker);
  }
  for (auto& worker : workers) worker->fail(ErrorCode::kPeerFailure, message);
}

}  // namespace runrun
