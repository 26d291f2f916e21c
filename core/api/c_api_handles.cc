// The C API's handles (c_api.h): polling, waiting, errors and outputs of an op, and the free
// list that released handles go back to.
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/fork_generation.h"
#include "core/api/c_api_last_error.h"
#include "core/api/c_api_objects.h"
#include "core/api/dlpack_convert.h"
#include "core/runtime/handle.h"
#include "runrun/c_api.h"

namespace {

using runrun::capi::guarded;
using runrun::capi::require;

runrun_status to_status(runrun::ErrorCode code) { return static_cast<runrun_status>(code); }

// A handle's op that cannot complete in this process: it was enqueued before a fork (the
// background thread that runs it stayed in the parent). Sets the handle's error.
bool stranded_by_fork(runrun_handle* h) {
  if (!runrun::forked_since(h->made_in)) return false;
  const std::optional<bool> done = h->handle->try_done();  // a lock held at the fork: stranded
  if (done && *done) return false;
  h->error = runrun::forked_child_message("waiting for an op enqueued before the fork", h->made_in);
  return true;
}

// runrun_handle structs go back to this list on release and serve the next ops: made on the
// enqueuing thread a burst at a time and freed after the burst, each missed that thread's
// malloc cache (~260 instructions, issue 12 point 6). Leaked on purpose, so that a handle
// released during static destruction still finds it. Any thread (one mutex).
class HandleFreeList {
 public:
  runrun_handle* take(std::shared_ptr<runrun::Handle> handle) {
    runrun_handle* h = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!spare_.empty()) {
        h = spare_.back();
        spare_.pop_back();
      }
    }
    if (h == nullptr) return new runrun_handle{std::move(handle), {}, {}, runrun::fork_stamp()};
    h->handle = std::move(handle);
    h->made_in = runrun::fork_stamp();
    return h;
  }
  void give_back(runrun_handle* h) {
    h->handle.reset();  // may free the op's outputs: outside the lock
    h->error.clear();
    h->splits.clear();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (spare_.size() < kCapacity) {
        spare_.push_back(h);
        return;
      }
    }
    delete h;
  }

 private:
  static constexpr size_t kCapacity = 4096;
  std::mutex mutex_;
  std::vector<runrun_handle*> spare_;
};

HandleFreeList& handle_free_list() {
  static auto* list = new HandleFreeList;
  return *list;
}

}  // namespace

void runrun::capi::give(std::shared_ptr<runrun::Handle> handle, runrun_handle** out) {
  *out = handle_free_list().take(std::move(handle));
}

extern "C" {

runrun_status runrun_handle_poll(runrun_handle* h) {
  if (!h) return RUNRUN_INVALID_ARGUMENT;
  if (stranded_by_fork(h)) return RUNRUN_UNSUPPORTED;
  if (!h->handle->done()) return RUNRUN_IN_PROGRESS;
  return to_status(h->handle->code());
}

runrun_status runrun_handle_wait(runrun_handle* h, double timeout_seconds) {
  if (!h) return RUNRUN_INVALID_ARGUMENT;
  if (stranded_by_fork(h)) return RUNRUN_UNSUPPORTED;
  bool unlimited = timeout_seconds < 0 || !std::isfinite(timeout_seconds);  // NaN, inf: no limit
  bool done = unlimited ? h->handle->wait()
                        : h->handle->wait(std::chrono::duration<double>(timeout_seconds));
  if (!done) return RUNRUN_IN_PROGRESS;
  return to_status(h->handle->code());
}

const char* runrun_handle_error(runrun_handle* h) {
  if (!h) return "";
  if (!stranded_by_fork(h)) h->error = h->handle->error();
  return h->error.c_str();
}

runrun_status runrun_handle_take_output(runrun_handle* h, DLManagedTensor** out) {
  return runrun_handle_take_output_at(h, 0, out);
}

runrun_status runrun_handle_take_output_at(runrun_handle* h, size_t index, DLManagedTensor** out) {
  return guarded([&] {
    require(h && out, "runrun_handle_take_output: null argument");
    std::optional<runrun::OwnedTensor> tensor = h->handle->take_output(index);
    require(tensor.has_value(),
            "no output to take: the op has not completed, failed, allocates no output, or it was "
            "taken already");
    *out = runrun::to_dlpack(std::move(*tensor));
  });
}

runrun_status runrun_handle_received_splits(runrun_handle* h, const int64_t** splits,
                                            size_t* count) {
  return guarded([&] {
    require(h && splits && count, "runrun_handle_received_splits: null argument");
    h->splits = h->handle->received_splits();
    *splits = h->splits.data();
    *count = h->splits.size();
  });
}

runrun_status runrun_handle_join_result(runrun_handle* h, int32_t* last_rank) {
  return guarded([&] {
    require(h && last_rank, "runrun_handle_join_result: null argument");
    *last_rank = static_cast<int32_t>(h->handle->result());
  });
}

void runrun_handle_release(runrun_handle* h) {
  // A handle of the parent's op is left alone in a forked child: the free list's lock may have
  // been held by a thread that did not come along.
  if (h != nullptr && !runrun::forked_since(h->made_in)) handle_free_list().give_back(h);
}

}  // extern "C"
