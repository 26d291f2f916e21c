#include "core/runtime/entry_pool.h"

#include <utility>

namespace runrun {
namespace {

void clear_keeping_capacity(Request& r) {
  r.name.clear();
  r.op = OpType::kAllreduce;
  r.dtype = DataType::kFloat32;
  r.shape.clear();
  r.device = kCpuDevice;
  r.reduce_op = ReduceOp::kSum;
  r.prescale = 1.0;
  r.postscale = 1.0;
  r.root = -1;
  r.splits.clear();
  r.group.clear();
  r.group_size = 0;
  r.waited_us = 0;
}

void clear_keeping_capacity(TensorView& v) {
  v.data = nullptr;
  v.dtype = DataType::kFloat32;
  v.shape.clear();
  v.device = kCpuDevice;
}

}  // namespace

void clear_keeping_capacity(TensorEntry& entry) {
  clear_keeping_capacity(entry.request);
  entry.name_hash = 0;
  entry.unsent = false;
  clear_keeping_capacity(entry.input);
  clear_keeping_capacity(entry.output);
  entry.handle.reset();
  entry.handle_index = 0;
  entry.enqueued_at = {};
  entry.action = nullptr;
  entry.device_sync.reset();
}

std::unique_ptr<TensorEntry> EntryPool::take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_.empty()) {
      std::unique_ptr<TensorEntry> entry = std::move(spare_.back());
      spare_.pop_back();
      return entry;
    }
  }
  return std::make_unique<TensorEntry>();
}

void EntryPool::give_back(std::vector<std::unique_ptr<TensorEntry>>& entries) {
  // Emptied outside the lock: dropping a handle or an action may run arbitrary destructors.
  for (auto& entry : entries) {
    if (entry) clear_keeping_capacity(*entry);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& entry : entries) {
      if (entry && spare_.size() < capacity_) spare_.push_back(std::move(entry));
    }
  }
  entries.clear();  // what did not fit is freed here, outside the lock
}

size_t EntryPool::spare() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spare_.size();
}

}  // namespace runrun
