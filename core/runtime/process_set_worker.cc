#include "core/runtime/process_set_worker.h"

#include <chrono>
#include <future>
#include <tuple>

#include "common/rank_events.h"
#include "core/api/enqueue_checks.h"
#include "core/runtime/thread_placement.h"
#include "core/timeline/timeline_names.h"

namespace runrun {

ProcessSetWorker::ProcessSetWorker(int id, Transport transport, const Config& config, Logger logger,
                                   Timeline* timeline, int cpu,
                                   std::shared_ptr<EntryPool> entry_pool)
    : id_(id),
      cpu_(cpu),
      transport_(std::move(transport)),
      config_(config),
      logger_(std::move(logger)),
      timeline_(timeline),
      controller_(*transport_.control, transport_.data->rank(), transport_.data->size(), config,
                  logger_, timeline),
      executor_(transport_, config, logger_, timeline),
      cycle_time_(config.cycle_time),
      hierarchical_(dynamic_cast<HierarchicalSwitch*>(transport_.data.get())),
      entry_pool_(std::move(entry_pool)) {
  if (config.autotune.enabled && id_ == 0) {
    TunedParameters defaults{config.fusion_threshold, config.cycle_time,
                             hierarchical_ != nullptr && hierarchical_->hierarchical()};
    tuner_ =
        std::make_unique<Autotuner>(*transport_.control, transport_.data->rank(), config.autotune,
                                    defaults, hierarchical_ != nullptr, logger_);
  }
  if (config.profile && id_ == 0) {
    lateness_ = std::make_unique<RankLatenessRecorder>(*transport_.control, transport_.data->rank(),
                                                       transport_.data->size());
  }
  thread_ = std::thread([this] { loop(); });
}

ProcessSetWorker::~ProcessSetWorker() { shutdown(); }

void ProcessSetWorker::abort_transport() {
  executor_.abort_device();
  transport_.data->abort();
  transport_.control->abort();
}

void ProcessSetWorker::enqueue(std::vector<std::unique_ptr<TensorEntry>> entries) {
  queue_.push(std::move(entries), transport_.data->rank());
}

void ProcessSetWorker::enqueue(std::unique_ptr<TensorEntry> entry) {
  queue_.push(std::move(entry), transport_.data->rank());
}

void ProcessSetWorker::shutdown(const std::string& reason,
                                std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::lock_guard<std::mutex> lock(shutdown_mutex_);  // callers may race (remove vs shutdown)
  if (!reason.empty()) {
    std::lock_guard<std::mutex> reason_lock(failure_mutex_);
    shutdown_reason_ = reason;
  }
  shutdown_requested_ = true;
  queue_.wake();
  if (!thread_.joinable()) return;
  if (!deadline) deadline = std::chrono::steady_clock::now() + config_.shutdown_timeout;
  while (!stopped_ && std::chrono::steady_clock::now() < *deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!stopped_) {
    logger_->warn(
        "process set {}: the other ranks did not join shutdown within {} s "
        "(RUNRUN_SHUTDOWN_TIMEOUT); leaving without them",
        id_, config_.shutdown_timeout.count());
    abort_transport();
  }
  thread_.join();
}

void ProcessSetWorker::note_waiting() {
  if (waiting_since_.load() != 0) return;
  {
    std::lock_guard<std::mutex> lock(waiting_mutex_);
    waiting_for_count_ = controller_.pending_names(waiting_for_);
  }
  waiting_since_ = std::chrono::steady_clock::now().time_since_epoch().count();
}

std::optional<std::chrono::steady_clock::time_point> ProcessSetWorker::waiting_since() const {
  int64_t ticks = waiting_since_.load();
  if (ticks == 0) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ticks));
}

std::vector<std::string> ProcessSetWorker::waiting_for() const {
  std::lock_guard<std::mutex> lock(waiting_mutex_);
  return {waiting_for_.begin(),
          waiting_for_.begin() + static_cast<std::ptrdiff_t>(waiting_for_count_)};
}

void ProcessSetWorker::fail(ErrorCode code, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    if (failure_) return;
    failure_ = std::make_pair(code, message);
  }
  failure_set_.notify_all();
  abort_transport();
  queue_.wake();
}

void ProcessSetWorker::loop() {
  std::string reason = "runrun is shut down on rank " + std::to_string(transport_.data->rank()) +
                       ": call init() again before enqueueing more ops";
  ErrorCode code = ErrorCode::kShutDown;
  place_this_thread("runrun-set" + std::to_string(id_), cpu_, logger_);
  try {
    while (true) {
      wait_for_work();
      bool shutting_down = shutdown_requested_;
      if (!controller_.has_pending() && !shutting_down) continue;
      note_waiting();
      // Horovod's HOROVOD_TIMELINE_MARK_CYCLES: one global mark per round that had work.
      if (timeline_ && timeline_->marking_cycles()) timeline_->mark("CYCLE_START");
      Controller::Round round = controller_.negotiate(shutting_down);
      if (round.peer_shutdown) {
        std::lock_guard<std::mutex> lock(failure_mutex_);
        if (shutting_down && !shutdown_reason_.empty()) reason = shutdown_reason_;
        if (!shutting_down) reason = peer_shutdown_reason(round.shutting_down);
        stopped_cleanly_ = true;  // every rank of the set took part in this round
        break;
      }
      if (round.ready.empty() && round.stall_shutdown.empty()) {
        queue_.wait(std::chrono::steady_clock::now() + cycle_time_);
        continue;
      }
      waiting_since_ = 0;  // progress
      execute_round(round);
      if (!round.stall_shutdown.empty()) throw TimeoutError(RUNRUN_WHERE, round.stall_shutdown);
    }
  } catch (const Error& e) {
    std::tie(code, reason) = stop_cause(e);
  } catch (const std::exception& e) {
    code = ErrorCode::kInternal;
    reason = std::string("internal error in the background thread: ") + e.what();
    logger_->error("process set {}: {}", id_, reason);
  }
  fail_everything(code, reason);
  stopped_ = true;
}

void ProcessSetWorker::wait_for_work() {
  RUNRUN_CHECK_OWNER_THREAD(owner_);
  if (!controller_.has_pending() && !shutdown_requested_) {
    waiting_since_ = 0;
    queue_.wait(std::nullopt);
    queue_.settle(config_.burst_gap, std::chrono::steady_clock::now() + cycle_time_);
  }
  {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    if (failure_) throw_error(failure_->first, RUNRUN_WHERE, failure_->second);
  }
  queue_.pop_all(arrivals_);
  controller_.add(arrivals_);
}

std::string ProcessSetWorker::peer_shutdown_reason(const std::vector<int>& shutting_down) const {
  std::string ranks;
  for (int r : shutting_down) {
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    if (id_ == 0) {  // set 0: world ranks
      report_failure_cause(FailureCause::kPeerLeft, transport_.data->rank(), r);
    }
  }
  return std::string("runrun was shut down: ") + (shutting_down.size() > 1 ? "ranks [" : "rank [") +
         ranks + "] of process set " + std::to_string(id_) +
         " called shutdown (or exited) while this rank (" +
         std::to_string(transport_.data->rank()) + ") still had ops pending";
}

void ProcessSetWorker::execute_round(const Controller::Round& round) {
  RUNRUN_CHECK_OWNER_THREAD(owner_);
  take_ready(round);
  queue_.finished(finished_names_);  // one lock for the round, not one per tensor
  executor_.execute(round.ready, executing_);
  if (entry_pool_) {
    entry_pool_->give_back(executing_);  // their names were finished above
  } else {
    executing_.clear();
  }
  if (lateness_) lateness_->after_round(ages_);
  if (tuner_) {
    if (auto tuned = tuner_->after_round(round.ready)) apply(*tuned);
  }
}

void ProcessSetWorker::take_ready(const Controller::Round& round) {
  const auto agreed_at = std::chrono::steady_clock::now();
  executing_.clear();
  ages_.clear();
  finished_names_.clear();
  for (const Response& response : round.ready) {
    executing_.push_back(controller_.take(response.name));
    if (const auto& entry = executing_.back()) {
      finished_names_.push_back({entry->request.name, entry->name_hash});
    }
    if (timeline_ && timeline_->active()) {  // the op's span holds its queueing, as Horovod's
      const std::string row = timeline_row_name(response.op, response.name);
      timeline_->begin(row, timeline_op_phase(response.op));
      timeline_->begin(row, "QUEUE");
    }
    // Same tensors on every rank (round.ready is agreed): failed ops and joins are left out.
    if (lateness_ && response.ok() && response.op != OpType::kJoin) {
      const auto& entry = executing_.back();
      ages_.push_back(entry ? std::chrono::duration<float>(agreed_at - entry->enqueued_at).count()
                            : -1.0F);
    }
  }
}

std::pair<ErrorCode, std::string> ProcessSetWorker::stop_cause(const Error& e) {
  std::pair<ErrorCode, std::string> cause{e.code(), e.what()};
  std::unique_lock<std::mutex> lock(failure_mutex_);
  if (cause.first == ErrorCode::kPeerFailure) {
    failure_set_.wait_for(lock, kRootCauseGrace, [this] { return failure_.has_value(); });
  }
  if (failure_) cause = *failure_;  // the cause, not the abort it caused
  logger_->error("process set {}: background thread stops: {} ({})", id_, cause.second, e.where());
  return cause;
}

void ProcessSetWorker::apply(const TunedParameters& parameters) {
  executor_.set_fusion_threshold(parameters.fusion_threshold);
  cycle_time_ = parameters.cycle_time;
  if (hierarchical_) hierarchical_->set_hierarchical(parameters.hierarchical);
}

void ProcessSetWorker::fail_everything(ErrorCode code, const std::string& message) {
  // Each op's error names the op, its tensor and this rank before the reason, as every other
  // runtime error does (docs/troubleshooting.md).
  const int rank = transport_.data->rank();
  auto fail = [&](TensorEntry& entry) {
    entry.handle->fail(code, op_failure(entry.request.op, entry.request.name, rank, message));
  };
  for (auto& entry : queue_.close(message, code)) fail(*entry);
  for (auto& entry : arrivals_) {  // popped, not yet handed to the controller (it threw)
    if (!entry) continue;
    queue_.finished({entry->request.name, entry->name_hash});
    fail(*entry);
  }
  arrivals_.clear();
  for (auto& entry : executing_) {
    if (entry) fail(*entry);  // no-op for the ones that completed
  }
  executing_.clear();
  for (auto& entry : controller_.take_all()) {
    queue_.finished({entry->request.name, entry->name_hash});
    fail(*entry);
  }
}

}  // namespace runrun
