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

bool DeadlineAlarm::disarm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
  }
  cancelled_cv_.notify_all();
  return fired_.load();  // set under mutex_ before on_deadline runs: final once cancelled_ is
}

DeadlineAlarm::~DeadlineAlarm() {
  disarm();
  thread_.join();
}

}  // namespace runrun
