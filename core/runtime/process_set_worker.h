#pragma once
// Why: the background thread of one process set. It sleeps until something is enqueued (an
// idle runtime uses no CPU), then runs negotiation rounds and executes what every rank agreed,
// until its queue is empty again. A round that agreed nothing while work is pending waits at
// most the cycle time for more enqueues before the next round (never a fixed sleep per op).
// Each process set has its own worker, backend, cache and fusion buffer, so ops on different
// sets proceed independently.
// Thread-safety: enqueue/request_shutdown may be called from any thread; the rest is internal
// to the worker thread. The destructor stops and joins the thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/debug_checks.h"
#include "common/logging.h"
#include "core/autotune/autotuner.h"
#include "core/runtime/config.h"
#include "core/negotiation/controller.h"
#include "core/runtime/entry_pool.h"
#include "core/execution/op_executor.h"
#include "core/negotiation/rank_lateness.h"
#include "core/runtime/tensor_queue.h"
#include "ops/backend.h"
#include "ops/hierarchical_switch.h"

namespace runrun {

class ProcessSetWorker {
 public:
  // `timeline` may be null; it must outlive the worker.
  // The worker owns both halves of `transport` (transport.control and transport.data, non-null):
  // it negotiates over the control channel and moves data over the backend.
  // Its thread is named "runrun-set<id>" and, when `cpu` >= 0, runs only on that CPU
  // (RUNRUN_THREAD_AFFINITY, core/runtime/thread_placement.h). Finished entries go back to
  // `entry_pool` (core/runtime/entry_pool.h) when one is given, else they are freed.
  ProcessSetWorker(int id, Transport transport, const Config& config, Logger logger,
                   Timeline* timeline, int cpu = -1,
                   std::shared_ptr<EntryPool> entry_pool = nullptr);
  ~ProcessSetWorker();
  ProcessSetWorker(const ProcessSetWorker&) = delete;
  ProcessSetWorker& operator=(const ProcessSetWorker&) = delete;

  // Throws InvalidArgumentError (name in flight) or ShutDownError (worker stopped).
  void enqueue(std::vector<std::unique_ptr<TensorEntry>> entries);
  void enqueue(std::unique_ptr<TensorEntry> entry);

  // Asks every rank of the set to stop (a shutdown round). Waits until `deadline` (default: the
  // configured shutdown timeout from now) for the other ranks, then aborts the backend and joins
  // the thread. Idempotent. `reason`, when given, is the error text of the ops still pending.
  void shutdown(const std::string& reason = "",
                std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
  // False once the worker stopped or stops: its queue is closed and refuses new ops.
  bool running() const { return !stopped_.load() && !queue_.closed(); }
  // After the thread stopped: whether it stopped in a shutdown round every rank of the set took
  // part in. False after an error, an abort or a shutdown the peers never joined: then peers may
  // be left mid-collective, and whatever waits for them at exit (MPI_Finalize) would wait forever.
  bool stopped_cleanly() const { return stopped_cleanly_.load(); }

  // Since when this rank has been waiting in negotiation with ops pending (nullopt: it is not),
  // and the names it waits for. Any thread.
  std::optional<std::chrono::steady_clock::time_point> waiting_since() const;
  std::vector<std::string> waiting_for() const;

  // A peer was lost (or another fatal condition seen outside this thread): every pending and
  // later op fails with `message`; the blocked backend call is aborted. Any thread.
  void fail(ErrorCode code, const std::string& message);

  const Backend& backend() const { return *transport_.data; }
  int id() const { return id_; }
  // Numbers unnamed ops (barriers) identically on every rank of the set.
  uint64_t next_sequence() { return sequence_++; }
  // Counters for tests and logs; any thread may read them.
  size_t cache_hits() const { return controller_.cache_hits(); }
  size_t coordinator_rounds() const { return controller_.coordinator_rounds(); }
  size_t negotiation_rounds() const { return controller_.negotiation_rounds(); }
  size_t fused_collectives() const { return executor_.fused_collectives(); }
  // The global set's autotuner (RUNRUN_AUTOTUNE=1), null otherwise: other sets keep the
  // configured values. Read its changes()/frozen() from any thread.
  const Autotuner* autotuner() const { return tuner_.get(); }
  // runrun --profile (RUNRUN_PROFILE): the global set's per-rank lateness from the negotiation
  // (core/negotiation/rank_lateness.h), filled on rank 0; null when not profiling or for other
  // sets. Any
  // thread may call its snapshot().
  const RankLatenessRecorder* lateness() const { return lateness_.get(); }

 private:
  void loop();
  // Sleeps while there is nothing to do, then moves what was enqueued to the controller;
  // throws the failure another thread reported (fail()).
  void wait_for_work();
  void note_waiting();
  // The message of every pending op when peers shut down while this rank still had work.
  std::string peer_shutdown_reason(const std::vector<int>& shutting_down) const;
  // Takes the agreed entries from the controller, runs them and gives them back.
  void execute_round(const Controller::Round& round);
  void take_ready(const Controller::Round& round);
  // Why the thread stops after `e`: the reported failure it caused, if one comes in time.
  std::pair<ErrorCode, std::string> stop_cause(const Error& e);
  void fail_everything(ErrorCode code, const std::string& message);
  // Makes the autotuner's setting take effect (before the next round, on every rank alike).
  void apply(const TunedParameters& parameters);

  // Aborts the backend and the control channel (whichever the thread is blocked in).
  void abort_transport();

  int id_;
  int cpu_;  // the CPU its thread is pinned to; -1: not pinned
  Transport transport_;
  const Config& config_;
  Logger logger_;
  Timeline* timeline_;
  TensorQueue queue_;
  // The worker's thread, which alone touches the round's state below (checked in builds with
  // RUNRUN_DEBUG_CHECKS: common/debug_checks.h).
  OwnerThread owner_;
  Controller controller_;
  OpExecutor executor_;
  std::chrono::microseconds cycle_time_;        // the configured or the autotuner's (worker thread)
  HierarchicalSwitch* hierarchical_ = nullptr;  // transport_.data when it can switch
  std::unique_ptr<Autotuner> tuner_;
  std::unique_ptr<RankLatenessRecorder> lateness_;
  std::vector<float> ages_;  // this round's ages for lateness_ (worker thread)
  // pop_all's vector, empty between rounds: it and the queue's swap their capacity.
  std::vector<std::unique_ptr<TensorEntry>> arrivals_;
  std::vector<std::unique_ptr<TensorEntry>> executing_;  // the round being executed
  std::shared_ptr<EntryPool> entry_pool_;                // may be null
  std::vector<HashedName> finished_names_;  // their names (views into executing_), reused
  std::atomic<bool> shutdown_requested_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> stopped_cleanly_{false};
  std::atomic<uint64_t> sequence_{0};
  std::atomic<int64_t> waiting_since_{0};  // steady_clock ticks; 0: not waiting
  mutable std::mutex waiting_mutex_;
  std::vector<std::string> waiting_for_;  // the first waiting_for_count_ are the names
  size_t waiting_for_count_ = 0;
  std::mutex shutdown_mutex_;
  std::mutex failure_mutex_;
  std::string shutdown_reason_;                               // guarded by failure_mutex_
  std::optional<std::pair<ErrorCode, std::string>> failure_;  // set by fail()
  std::condition_variable failure_set_;                       // notified when fail() sets failure_
  // How long the background thread, stopped by a transport error naming a peer, waits for the
  // peer monitor to name the rank that was really lost: a rank that leaves because it lost a
  // peer resets its own connections, so the first transport error may name that messenger.
  static constexpr std::chrono::milliseconds kRootCauseGrace{250};
  std::thread thread_;
};

}  // namespace runrun
