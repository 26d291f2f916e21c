#include "core/runtime/handle.h"

namespace runrun {

// outputs_ grows on set_output: most ops (in place, or into the caller's tensor) have none.
Handle::Handle(size_t parts) : parts_left_(parts) {}

bool Handle::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

std::optional<bool> Handle::try_done() const {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  return done_;
}

bool Handle::wait(std::optional<std::chrono::duration<double>> timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  if (done_) return true;
  if (timeout && timeout->count() <= 0) return false;
  std::optional<FrameworkWaits::Scope> blocked;  // ends the worker's wait for more enqueues
  if (waits_) blocked.emplace(*waits_);
  if (!timeout) {
    done_cv_.wait(lock, [&] { return done_; });
    return true;
  }
  return done_cv_.wait_for(lock, *timeout, [&] { return done_; });
}

ErrorCode Handle::code() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return code_;
}

std::string Handle::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::optional<OwnedTensor> Handle::take_output(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!done_ || code_ != ErrorCode::kOk || index >= outputs_.size() || !outputs_[index]) {
    return std::nullopt;
  }
  std::optional<OwnedTensor> out = std::move(outputs_[index]);
  outputs_[index].reset();
  return out;
}

std::vector<int64_t> Handle::received_splits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return received_splits_;
}

int64_t Handle::result() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return result_;
}

void Handle::set_output(size_t index, OwnedTensor tensor) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (index >= outputs_.size()) outputs_.resize(index + 1);
  outputs_[index] = std::move(tensor);
}

void Handle::set_received_splits(std::vector<int64_t> splits) {
  std::lock_guard<std::mutex> lock(mutex_);
  received_splits_ = std::move(splits);
}

void Handle::set_result(int64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  result_ = value;
}

void Handle::complete_part() {
  if (complete_part_quietly()) notify_done();
}

bool Handle::complete_part_quietly() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return false;
  if (parts_left_ > 0) --parts_left_;
  if (parts_left_ > 0) return false;
  done_ = true;
  return true;
}

// A waiter checks done_ under mutex_ before it sleeps, and done_ was set under mutex_ before
// this: notifying without the lock loses no wake-up.
void Handle::notify_done() const { done_cv_.notify_all(); }

void Handle::fail(ErrorCode code, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return;
  code_ = code;
  error_ = message;
  done_ = true;
  for (auto& out : outputs_) out.reset();
  done_cv_.notify_all();
}

}  // namespace runrun
