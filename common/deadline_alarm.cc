#include "common/deadline_alarm.h"

#include <utility>

namespace runrun {

DeadlineAlarm::DeadlineAlarm(std::chrono::milliseconds after, std::function<void()> on_deadline) {
  const auto deadline = std::chrono::steady_clock::now() + after;
  thread_ = std::thread([this, deadline, on_deadline = std::move(on_deadline)] {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (cancelled_cv_.wait_until(lock, deadline, [this] { return cancelled_; })) return;
      fired_ = true;
    }
    on_deadline();
  });
}

DeadlineAlarm::~DeadlineAlarm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
  }
  cancelled_cv_.notify_all();
  thread_.join();
}

}  // namespace runrun
