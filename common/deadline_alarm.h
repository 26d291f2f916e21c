#pragma once
// Why: some collective steps have no timeout of their own (MPI's blocking and non-blocking
// collectives wait for a stopped peer for ever; a control channel's only way out is abort()).
// A DeadlineAlarm runs `on_deadline` once if it is still alive `after` its construction, on its
// own thread, so that a step which must finish in bounded time can be aborted from outside
// (e.g. control.abort()) and reported as a timeout by the blocked thread.
// Threading contract: construct and destroy on one thread. `on_deadline` runs on the alarm's
// thread, at most once, and must be safe to run concurrently with the guarded step. The
// destructor cancels the alarm and joins its thread (it waits for `on_deadline` only if that
// already started, never for the deadline). fired() may be read from any thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace runrun {

class DeadlineAlarm {
 public:
  DeadlineAlarm(std::chrono::milliseconds after, std::function<void()> on_deadline);
  ~DeadlineAlarm();
  DeadlineAlarm(const DeadlineAlarm&) = delete;
  DeadlineAlarm& operator=(const DeadlineAlarm&) = delete;

  // Whether `on_deadline` ran (or is running).
  bool fired() const { return fired_.load(); }
  // Cancels the alarm; returns whether it fired before (the guarded step then counts as timed
  // out even if it finished: `on_deadline` may have aborted something it still needs).
  bool disarm();

 private:
  std::mutex mutex_;
  std::condition_variable cancelled_cv_;
  bool cancelled_ = false;  // guarded by mutex_
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace runrun
