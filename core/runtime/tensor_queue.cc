#include "core/runtime/tensor_queue.h"

#include <algorithm>
#include <string_view>
#include <thread>
#include <utility>

#include "core/api/enqueue_checks.h"

namespace runrun {

void TensorQueue::push(std::vector<std::unique_ptr<TensorEntry>> entries, int rank) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ && !entries.empty()) throw_closed(*entries.front(), rank);
    // All or nothing: a name already in flight, or repeated within `entries`, takes back the
    // names this call inserted before it.
    for (size_t i = 0; i < entries.size(); ++i) {
      if (insert_in_flight(*entries[i])) continue;
      for (size_t j = 0; j < i; ++j) {
        erase_in_flight({entries[j]->request.name, entries[j]->name_hash});
      }
      throw_in_flight(*entries[i], rank);
    }
    for (auto& entry : entries) append(std::move(entry));
    note_push();
  }
  cv_.notify_one();
}

void TensorQueue::push(std::unique_ptr<TensorEntry> entry, int rank) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw_closed(*entry, rank);
    if (!insert_in_flight(*entry)) throw_in_flight(*entry, rank);
    append(std::move(entry));
    note_push();
  }
  cv_.notify_one();
}

bool TensorQueue::insert_in_flight(TensorEntry& entry) {
  entry.name_hash = hash_name(entry.request.name);
  const HashedName name{entry.request.name, entry.name_hash};
  if (spare_nodes_.empty()) return in_flight_.insert(name).second;
  spare_nodes_.back().value() = name;
  InFlight::insert_return_type result = in_flight_.insert(std::move(spare_nodes_.back()));
  if (result.inserted) {
    spare_nodes_.pop_back();  // now in the set
  } else {
    spare_nodes_.back() = std::move(result.node);  // handed back
  }
  return result.inserted;
}

void TensorQueue::erase_in_flight(const HashedName& name) {
  auto it = in_flight_.find(name);
  if (it == in_flight_.end()) return;
  InFlight::node_type node = in_flight_.extract(it);
  if (spare_nodes_.size() < kMaxSpareNodes) spare_nodes_.push_back(std::move(node));
}

void TensorQueue::throw_in_flight(const TensorEntry& entry, int rank) {
  throw InvalidArgumentError(RUNRUN_WHERE,
                             std::string(op_type_name(entry.request.op)) + " of tensor '" +
                                 entry.request.name + "' on rank " + std::to_string(rank) +
                                 ": an op with this name is already in flight; wait for its handle "
                                 "before reusing the name, or give each tensor a distinct name");
}

void TensorQueue::throw_closed(const TensorEntry& entry, int rank) const {
  throw_error(close_code_, RUNRUN_WHERE,
              op_failure(entry.request.op, entry.request.name, rank, close_reason_));
}

void TensorQueue::append(std::unique_ptr<TensorEntry> entry) {
  if (!entry->handle->reports_waits()) entry->handle->report_waits_to(waits_);
  incoming_.push_back(std::move(entry));
}

void TensorQueue::note_push() {
  last_push_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                   std::memory_order_relaxed);
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

void TensorQueue::finished(const HashedName& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  erase_in_flight(name);
}

void TensorQueue::finished(const std::vector<HashedName>& names) {
  if (names.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const HashedName& name : names) erase_in_flight(name);
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
    for (const auto& entry : left) erase_in_flight({entry->request.name, entry->name_hash});
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
