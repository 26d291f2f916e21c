#pragma once
// Why: the hand-off between the framework threads that enqueue ops and the background thread
// that runs them. Enqueue checks what can be checked without peers (a name already in flight,
// a closed runtime) and wakes the background thread; the background thread takes everything
// new in one go and owns it from then on.
// Thread-safety: push/finished/close may be called from any thread; pop_all and wait are for
// the one background thread of the process set.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/runtime/handle.h"
#include "core/negotiation/hashed_name.h"
#include "core/negotiation/message.h"
#include "core/runtime/tensor.h"
#include "ops/backend.h"

namespace runrun {

// One enqueued tensor op (a member of a grouped op counts as one entry).
struct DeviceSync;  // core/execution/device_staging.h

struct TensorEntry {
  Request request;
  size_t name_hash = 0;  // hash_name(request.name), set by TensorQueue::push
  // The controller's mark (background thread): the entry waits to be agreed from the response
  // cache or sent to the coordinator (it is listed in Controller::unsent_).
  bool unsent = false;
  TensorView input;
  TensorView output;  // data == nullptr when the runtime allocates the output
  std::shared_ptr<Handle> handle;
  size_t handle_index = 0;  // which output of the handle this entry fills
  std::chrono::steady_clock::time_point enqueued_at;
  // Process-set changes: runs on the background thread, with the set's backend, once every
  // rank agreed; an InvalidArgumentError it throws fails only this op.
  std::function<void(Transport&, Handle&)> action;
  // CUDA tensors: the framework stream and the producer event recorded on it at enqueue.
  std::shared_ptr<DeviceSync> device_sync;
};

class TensorQueue {
 public:
  // Adds the entries atomically (a group all or nothing). Throws InvalidArgumentError naming the
  // tensor when a name is already in flight (or repeated within `entries`), ShutDownError with
  // the close reason once closed.
  void push(std::vector<std::unique_ptr<TensorEntry>> entries, int rank);
  // The same for one entry (one op per gradient: no vector to allocate).
  void push(std::unique_ptr<TensorEntry> entry, int rank);

  // Blocks until something was pushed, the queue was closed or woken, or `deadline` passed.
  void wait(std::optional<std::chrono::steady_clock::time_point> deadline);
  // Moves the pushed entries into `into` (which must be empty) by swapping vectors: the queue
  // keeps `into`'s capacity, so a burst of single pushes does not regrow the vector each round.
  void pop_all(std::vector<std::unique_ptr<TensorEntry>>& into);
  // Wakes wait() without pushing (shutdown requests, failures): settle() holds nothing back
  // from then on.
  void wake();

  // Lets an enqueue burst finish before the background thread takes it. A framework that enqueues
  // one op per tensor (a gradient hook, a loop of async calls) pushes every few microseconds;
  // taking the first push alone starts a round that needs the CPUs the enqueuing thread is using,
  // and where there is no spare core the rest of the burst then waits a scheduler slice
  // (~0.5 ms) for the next round. Sleeps until `gap` passed since the last push, or until
  // `limit`, whichever comes first. Background thread only.
  // A thread blocking on a handle of this queue's ops ends it at once
  // (core/runtime/framework_waits.h).
  void settle(std::chrono::microseconds gap, std::chrono::steady_clock::time_point limit) const;

  // The op named `name` completed or failed: the name may be enqueued again. The entry that
  // carried the name must still be alive (the in-flight set refers to its name, not a copy).
  void finished(const HashedName& name);
  // The same for several names under one lock (the names of one round).
  void finished(const std::vector<HashedName>& names);

  // Later pushes throw an Error of `code` with `reason`; returns what was never popped.
  std::vector<std::unique_ptr<TensorEntry>> close(const std::string& reason,
                                                  ErrorCode code = ErrorCode::kShutDown);
  bool closed() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<TensorEntry>> incoming_;
  // Views of the names of the entries pushed and not yet finished(): every entry stays alive
  // (in incoming_, the controller or the executor) until its name was finished, so no copy.
  using InFlight = std::unordered_set<HashedName, NameHash, NameEqual>;
  InFlight in_flight_;
  // Nodes of in_flight_ erased by finished(), reused by the next pushes: a node made on the
  // enqueuing thread and freed on the background thread missed both threads' malloc caches.
  std::vector<InFlight::node_type> spare_nodes_;
  static constexpr size_t kMaxSpareNodes = 4096;
  // Under mutex_: hashes the entry's name into name_hash and adds it (false when it is already
  // in flight), and takes a name out again.
  bool insert_in_flight(TensorEntry& entry);
  void erase_in_flight(const HashedName& name);
  // Under mutex_: the error for an entry whose name is already in flight.
  [[noreturn]] static void throw_in_flight(const TensorEntry& entry, int rank);
  // A closed queue refuses an op with the close reason, naming the op, its tensor and the rank.
  [[noreturn]] void throw_closed(const TensorEntry& entry, int rank) const;
  void append(std::unique_ptr<TensorEntry> entry);  // under mutex_, name already inserted
  void note_push();                                 // under mutex_
  std::shared_ptr<FrameworkWaits> waits_ = std::make_shared<FrameworkWaits>();
  // How long settle() yields, watching for a waiter, before it sleeps.
  static constexpr std::chrono::microseconds kYieldFirst{10};
  // steady_clock ticks of the last push (read by settle() without the lock)
  std::atomic<int64_t> last_push_{0};
  bool woken_ = false;
  bool closed_ = false;
  std::string close_reason_;
  ErrorCode close_code_ = ErrorCode::kShutDown;
};

}  // namespace runrun
