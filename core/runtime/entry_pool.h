#pragma once
// Why: every enqueued tensor needs a TensorEntry, and its name, shape and views own heap
// buffers. Made on the framework's thread and freed on the background thread, each of those
// blocks missed both threads' malloc caches (~150 instructions to allocate and as many to free,
// five or six per tensor: docs/perf-notes/per-tensor-cost.md, "Recycled entries"). The
// background thread gives finished entries back here, emptied but with their buffers'
// capacity, and the next enqueue fills one in place: a name or shape no longer than an earlier
// one allocates nothing.
// Thread-safety: take and give_back may be called from any thread (one mutex, held for a
// pointer move); an entry is owned by exactly one thread at a time, as before.

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "core/runtime/tensor_queue.h"

namespace runrun {

class EntryPool {
 public:
  // Enough for every gradient of a large model enqueued at once; beyond it entries are freed.
  static constexpr size_t kDefaultCapacity = 2048;
  explicit EntryPool(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // A blank entry: every field as a new TensorEntry's, buffers possibly with capacity.
  std::unique_ptr<TensorEntry> take();
  // Empties each non-null entry (drops its handle, action and device sync: the op is over) and
  // keeps it for take(); leaves `entries` empty. The entries' names must no longer be in a
  // TensorQueue's in-flight set (it refers to them).
  void give_back(std::vector<std::unique_ptr<TensorEntry>>& entries);

  size_t spare() const;

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<TensorEntry>> spare_;
};

// Sets every field of `entry` as a new TensorEntry's, keeping the capacity of its strings and
// vectors. Exposed for the test that checks no field survives.
void clear_keeping_capacity(TensorEntry& entry);

}  // namespace runrun
