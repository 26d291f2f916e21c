#pragma once
// Why: a process set's background thread lets an enqueue burst finish before it negotiates
// (TensorQueue::settle), and ends that wait at once when a framework thread blocks on one of the
// set's handles: a thread that waits has stopped enqueueing, so holding the batch back any
// longer only adds latency. Handles report their blocking waits here (Handle::wait); the
// background thread sleeps on it. It is a batching hint, never needed for correctness.
// Thread-safety: any thread. Shared by the worker and its handles (handles may outlive it).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace runrun {

class FrameworkWaits {
 public:
  // Marks the calling thread as blocked on a handle for the scope's lifetime.
  class Scope {
   public:
    explicit Scope(FrameworkWaits& waits);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    FrameworkWaits& waits_;
  };

  // Whether some thread is blocked in a Scope now, or stop() was called.
  bool waited() const { return stopped_.load() || blocked_.load(std::memory_order_seq_cst) > 0; }

  // Sleeps until `deadline` or until waited() holds, whichever comes first. Returns waited().
  bool sleep_until_waited(std::chrono::steady_clock::time_point deadline);

  // Makes waited() true from now on and wakes the sleeper: the queue was woken for a shutdown
  // request or closed, so nothing may be held back any more.
  void stop();

 private:
  // Sequentially consistent on both sides: a waiter counts itself, then reads `sleepers_`; a
  // sleeper counts itself, then reads `blocked_` under the mutex. One of them sees the other,
  // so a sleeper is never left asleep while a thread is blocked.
  std::atomic<int> blocked_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stopped_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace runrun
