#pragma once
// Why: what a rank concludes from its peers' heartbeats, kept apart from enqueueing. It owns the
// PeerMonitor (one TCP connection per peer) and turns what the monitor sees into failed process
// sets: a lost peer (died or hung) fails every set of this rank with PeerFailureError and the
// transport is not finalized at exit; a peer that shut its runtime down (said goodbye) fails, after
// a short grace, the sets it belongs to with ShutDownError; a peer whose runtime failed (its global
// set stopped on an error while the process lives on: with MPI nothing else would tell the peers,
// which would wait for it in their next collective) fails, after a grace that lets a lost peer be
// reported first, its global set with PeerFailureError (the heartbeat speaks of that set only); and
// a rank waiting in negotiation while some peers have enqueued nothing warns after
// RUNRUN_STALL_CHECK_TIME and fails its global set after RUNRUN_STALL_SHUTDOWN_TIME (the waiting
// ranks' view of a stall, which the coordinator's stall inspector cannot have).
// Threading contract: construct, then start() on the thread that constructs the runtime (a
// collective step over the global control channel, before the global set's worker exists).
// Afterwards everything else runs on the monitor's thread (the heartbeat tick, goodbyes and
// losses), whose bookkeeping (idle_stall_warned_, peer_lost_, departed_) no other thread
// touches. begin_shutdown(), stop() and freeze_for_test() may be called from any thread; stop()
// joins the monitor thread and is idempotent, as is the destructor. The registry outlives this
// object; workers are reached through it (its own lock) and failed through
// ProcessSetWorker::fail, which any thread may call.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "core/runtime/config.h"
#include "core/health/peer_monitor.h"
#include "core/runtime/process_set_registry.h"
#include "ops/backend.h"

namespace runrun {

class PeerHealth {
 public:
  // `config` and `registry` must outlive this object.
  PeerHealth(const Config& config, const Topology& topology, Logger logger,
             ProcessSetRegistry& registry);
  ~PeerHealth();
  PeerHealth(const PeerHealth&) = delete;
  PeerHealth& operator=(const PeerHealth&) = delete;

  // Connects the peer monitor to every peer: a collective step over `global` that every rank
  // takes. Does nothing when RUNRUN_PEER_TIMEOUT=0 or there is one rank. Throws TimeoutError
  // (and `global` is aborted) when the ranks do not all take it within RUNRUN_PEER_TIMEOUT.
  void start(ControlChannel& global);
  // This rank is shutting down: peers that say goodbye from now on fail nothing.
  void begin_shutdown() { shutting_down_ = true; }
  // Says goodbye to every peer (they do not take it for a loss) and stops the monitor.
  void stop();

  // For tests: make this rank look hung to its peers' monitors.
  void freeze_for_test();

  // Peers that said goodbye are judged this long after (see fail_sets_of_departed_peers).
  static constexpr std::chrono::milliseconds kDepartureGrace{500};

 private:
  // Rank 0 gathers every rank's monitor address and broadcasts the table (with a job key).
  std::string exchange_addresses(ControlChannel& control);
  void watch_for_idle_stall();
  void fail_sets_of_departed_peers();
  void on_peer_left(int rank);
  void on_peer_failed(int rank);
  void on_peer_lost(int rank, PeerLoss how, const std::string& why);

  const Config& config_;
  Topology topology_;
  Logger logger_;
  ProcessSetRegistry& registry_;
  std::atomic<bool> shutting_down_{false};
  std::unique_ptr<PeerMonitor> monitor_;  // null when RUNRUN_PEER_TIMEOUT=0 or one rank
  bool idle_stall_warned_ = false;        // monitor thread only
  bool peer_lost_ = false;                // monitor thread only
  // Peers that said goodbye or that failed, each judged once its grace is over (monitor thread
  // only).
  struct Departure {
    int rank;
    bool failed;  // its runtime failed (else: it shut down)
    std::chrono::steady_clock::time_point due;
  };
  std::vector<Departure> departed_;
};

}  // namespace runrun
