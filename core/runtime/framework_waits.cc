#include "core/runtime/framework_waits.h"

namespace runrun {

FrameworkWaits::Scope::Scope(FrameworkWaits& waits) : waits_(waits) {
  waits_.blocked_.fetch_add(1, std::memory_order_seq_cst);
  if (waits_.sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(waits_.mutex_);
    waits_.changed_.notify_all();
  }
}

FrameworkWaits::Scope::~Scope() { waits_.blocked_.fetch_sub(1, std::memory_order_seq_cst); }

void FrameworkWaits::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
  changed_.notify_all();
}

bool FrameworkWaits::sleep_until_waited(std::chrono::steady_clock::time_point deadline) {
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  bool waited;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    waited = changed_.wait_until(lock, deadline, [&] { return this->waited(); });
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  return waited;
}

}  // namespace runrun
