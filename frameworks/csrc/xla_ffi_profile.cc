// The records of runrun --profile inside jax.jit (xla_ffi_profile.h): a bounded ring, filled by
// XLA's threads, emptied by Python in batches.

#include "csrc/xla_ffi_profile.h"

#include <time.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace runrun::python {
namespace {

enum RecordKind : int32_t { kAllreduce = 0, kStepEnd = 1 };

// About 2 MB at most: thousands of steps between two takes. A full ring drops the newest
// records and counts them (Python warns); the waiting thread is woken long before that.
constexpr size_t kCapacity = 1 << 16;

class Ring {
 public:
  void push(const ProfileRecord& r) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (records_.size() >= kCapacity) {
        ++dropped_;
        return;
      }
      records_.push_back(r);
      if (r.kind == kStepEnd) ++steps_;
      wake = due();
    }
    if (wake) ready_.notify_one();
  }

  ProfileBatch take() {
    ProfileBatch out;
    std::lock_guard<std::mutex> lock(mutex_);
    out.records.swap(records_);
    records_.reserve(out.records.size());
    std::swap(out.dropped, dropped_);
    steps_ = 0;
    return out;
  }

  bool wait(double timeout_s) {
    std::unique_lock<std::mutex> lock(mutex_);
    bool woken = ready_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                 [this] { return woken_ || due(); });
    woken_ = false;
    return woken;
  }

  void wake() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      woken_ = true;
    }
    ready_.notify_all();
  }

  void set_batch(size_t steps) {
    std::lock_guard<std::mutex> lock(mutex_);
    batch_ = steps < 1 ? 1 : steps;
  }

 private:
  bool due() const { return steps_ >= batch_ || records_.size() >= kCapacity / 2; }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<ProfileRecord> records_;  // guarded by mutex_, and so are the members below
  size_t dropped_ = 0;
  size_t steps_ = 0;    // step ends in records_
  size_t batch_ = 256;  // wake the waiter once this many steps are recorded
  bool woken_ = false;
};

Ring& ring() {
  static Ring* r = new Ring();  // never destroyed: XLA threads may record at exit
  return *r;
}

}  // namespace

double profile_clock() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void profile_record_allreduce(int32_t profiler, double start, double end, size_t bytes) {
  ring().push(ProfileRecord{profiler, kAllreduce, start, end, bytes});
}

void profile_record_step_end(int32_t profiler) {
  double now = profile_clock();
  ring().push(ProfileRecord{profiler, kStepEnd, now, now, 0});
}

ProfileBatch profile_take() { return ring().take(); }
bool profile_wait(double timeout_s) { return ring().wait(timeout_s); }
void profile_wake() { ring().wake(); }
void profile_set_batch(size_t steps) { ring().set_batch(steps); }

}  // namespace runrun::python
