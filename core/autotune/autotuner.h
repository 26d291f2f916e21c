#pragma once
// Why: Horovod's autotuning (HOROVOD_AUTOTUNE) for runrun: during the first steps the global
// process set's fusion threshold, cycle time and (where the hierarchical decorator is in place)
// hierarchical allreduce are searched online from measured throughput (AutotuneSearch decides),
// then frozen and logged.
// Agreement: a sample is a window of `steps_per_sample` negotiated rounds that agreed work, so
// every rank ends a sample after the same round. There, every rank sends its own elapsed time to
// rank 0 (one gather on the control channel), rank 0 scores the sample as the round's agreed
// bytes over the slowest rank's time, feeds AutotuneSearch, writes the CSV log and broadcasts
// the next setting (one broadcast). Every rank applies it before its next round, so fusion plans
// stay identical on every rank at every round. Once frozen, after_round costs a branch and no
// messages.
// Thread-safety: owned and driven by the process set's background thread (the one that drives
// its control channel); changes(), current() and frozen() may be read from any thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "core/autotune/autotune_log.h"
#include "core/autotune/autotune_search.h"
#include "core/runtime/config.h"
#include "core/negotiation/message.h"
#include "core/negotiation/response_list.h"
#include "ops/backend.h"

namespace runrun {

class Autotuner {
 public:
  // Monotonic time; injectable so tests can score samples deterministically.
  using Clock = std::function<std::chrono::nanoseconds()>;
  static std::chrono::nanoseconds steady_now();

  // `channel` is the set's control channel (rank `rank` of it); it must outlive the tuner.
  // `defaults` is the configured setting; `hierarchical_available` says whether the backend can
  // switch hierarchical allreduce (every rank passes the same value).
  Autotuner(ControlChannel& channel, int rank, const Config::Autotune& options,
            TunedParameters defaults, bool hierarchical_available, Logger logger,
            Clock clock = steady_now);

  // Called by every rank after executing each round's agreed responses (in the same rounds on
  // every rank). Collective at the end of a sample. Returns the setting to apply before the
  // next round when it changes.
  std::optional<TunedParameters> after_round(const ResponseList& ready);

  bool frozen() const { return frozen_.load(); }
  TunedParameters current() const;
  // Every setting applied: (count of rounds with work after which it took effect, setting),
  // starting with (0, defaults). Identical on every rank.
  std::vector<std::pair<uint64_t, TunedParameters>> changes() const;

 private:
  TunedParameters end_sample(std::chrono::nanoseconds elapsed, bool* frozen);
  std::string decide(const std::vector<std::string>& elapsed_by_rank);

  ControlChannel& channel_;
  int rank_;
  Config::Autotune options_;
  Logger logger_;
  Clock clock_;
  AutotuneSearch search_;  // rank 0's decides; the others' stays unused
  AutotuneLog log_;        // rank 0 only
  std::chrono::nanoseconds window_start_;
  uint64_t rounds_ = 0;  // rounds with work so far
  int rounds_in_window_ = 0;
  uint64_t window_bytes_ = 0;  // agreed bytes of the window's rounds (identical on all ranks)
  int64_t samples_ = 0;
  std::atomic<bool> frozen_{false};
  mutable std::mutex mutex_;  // guards changes_
  std::vector<std::pair<uint64_t, TunedParameters>> changes_;
};

}  // namespace runrun
