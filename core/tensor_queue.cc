#include "core/tensor_queue.h"

#include <algorithm>
#include <string_view>
#include <thread>
#include <utility>

namespace runrun {

void TensorQueue::push(std::vector<std::unique_ptr<TensorEntry>> entries, int rank) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw_error(close_code_, RUNRUN_WHERE, close_reason_);
    // Names repeated within one grouped call are caught by `batch`; a single op (the common,
    // per-gradient case) needs no set of its own.
    std::unordered_set<std::string_view> batch;
    for (const auto& entry : entries) {
      const std::string& name = entry->request.name;
      bool fresh = !in_flight_.count(name) && (entries.size() == 1 || batch.insert(name).second);
      RUNRUN_ENFORCE(fresh, InvalidArgumentError,
                     std::string(op_type_name(entry->request.op)) + " of tensor '" + name +
                         "' on rank " + std::to_string(rank) +
                         ": an op with this name is already in flight; wait for its handle "
                         "before reusing the name, or give each tensor a distinct name");
    }
    for (auto& entry : entries) {
      if (!entry->handle->reports_waits()) entry->handle->report_waits_to(waits_);
      in_flight_.insert(std::string_view(entry->request.name));
      incoming_.push_back(std::move(entry));
    }
    last_push_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                     std::memory_order_relaxed);
  }
  cv_.notify_one();
}

void TensorQueue::wait(std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto ready = [&] { return !incoming_.empty() || woken_ || closed_; };
  if (deadline) {
    cv_.wait_until(lock, *deadline, ready);
  } else {
    cv_.wait(lock, ready);
  }
  woken_ = false;
}

void TensorQueue::settle(std::chrono::microseconds gap,
                         std::chrono::steady_clock::time_point limit) const {
  using Clock = std::chrono::steady_clock;
  // The enqueuing thread of a lone op usually waits on it within microseconds: yielding first
  // lets it get there (on this CPU too) without a second futex wake-up of this thread.
  const Clock::time_point yield_until = Clock::now() + std::min(gap, kYieldFirst);
  while (Clock::now() < yield_until) {
    if (waits_->waited()) return;
    std::this_thread::yield();
  }
  for (;;) {
    const Clock::time_point quiet_at =
        Clock::time_point(Clock::duration(last_push_.load(std::memory_order_relaxed))) + gap;
    const Clock::time_point now = Clock::now();
    if (now >= quiet_at || now >= limit) return;
    if (waits_->sleep_until_waited(std::min(quiet_at, limit))) return;
  }
}

void TensorQueue::pop_all(std::vector<std::unique_ptr<TensorEntry>>& into) {
  std::lock_guard<std::mutex> lock(mutex_);
  into.swap(incoming_);
}

void TensorQueue::wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  waits_->stop();
  cv_.notify_one();
}

void TensorQueue::finished(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.erase(name);
}

void TensorQueue::finished(const std::vector<std::string_view>& names) {
  if (names.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::string_view name : names) in_flight_.erase(name);
}

std::vector<std::unique_ptr<TensorEntry>> TensorQueue::close(const std::string& reason,
                                                             ErrorCode code) {
  std::vector<std::unique_ptr<TensorEntry>> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!closed_) {
      closed_ = true;
      close_reason_ = reason;
      close_code_ = code;
    }
    left = std::exchange(incoming_, {});
    for (const auto& entry : left) in_flight_.erase(entry->request.name);
  }
  waits_->stop();
  cv_.notify_all();
  return left;
}

bool TensorQueue::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

}  // namespace runrun
