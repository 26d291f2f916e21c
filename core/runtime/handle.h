#pragma once
// Why: the completion object of an asynchronous op. The framework thread that enqueued the op
// polls or waits on it; the background thread completes it with success (and outputs the runtime
// allocated) or with the error every rank got. A grouped op's members share one handle, which
// completes when the last member did (the first error wins).
// Thread-safety: every method may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "core/runtime/framework_waits.h"
#include "core/runtime/tensor.h"

namespace runrun {

class Handle {
 public:
  // `parts`: how many member ops must complete before the handle does (1 unless grouped).
  explicit Handle(size_t parts = 1);

  // --- framework side ---
  bool done() const;
  // done() without blocking: nullopt while another thread holds the handle's lock. A forked
  // child asks this way: the thread that held the lock at the fork does not exist there.
  std::optional<bool> try_done() const;
  // Blocks until done or the timeout passed (nullopt: no limit). Returns done().
  bool wait(std::optional<std::chrono::duration<double>> timeout = std::nullopt) const;
  ErrorCode code() const;
  std::string error() const;
  // Moves output `index` out; nullopt when there is none, it was taken already or the op
  // failed (an output allocated at enqueue holds no result then).
  std::optional<OwnedTensor> take_output(size_t index);
  std::vector<int64_t> received_splits() const;
  // Integer result: the last rank to join (join), the new set id (add_process_set).
  int64_t result() const;

  // Blocking waits are reported to `waits` (the queue that took the op sets it at enqueue,
  // before the handle is returned: not while another thread may wait on it).
  void report_waits_to(std::shared_ptr<FrameworkWaits> waits) { waits_ = std::move(waits); }
  bool reports_waits() const { return waits_ != nullptr; }

  // --- background-thread side ---
  // Stores an output of member `index` before that member completes.
  void set_output(size_t index, OwnedTensor tensor);
  void set_received_splits(std::vector<int64_t> splits);
  void set_result(int64_t value);
  void complete_part();
  // complete_part() in two steps, for a bucket of many handles: mark every member first, then
  // wake their waiters. Waking one waiter per completion lets it preempt the completing thread
  // on a machine without a spare core, so each next handle would complete a context switch
  // (~12 us) later; marked first, the woken framework thread finds the rest done.
  // Returns true when this part completed the handle: call notify_done() then.
  bool complete_part_quietly();
  void notify_done() const;
  void fail(ErrorCode code, const std::string& message);

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable done_cv_;
  size_t parts_left_;
  bool done_ = false;
  ErrorCode code_ = ErrorCode::kOk;
  std::string error_;
  std::vector<std::optional<OwnedTensor>> outputs_;
  std::vector<int64_t> received_splits_;
  int64_t result_ = -1;
  std::shared_ptr<FrameworkWaits> waits_;
};

}  // namespace runrun
