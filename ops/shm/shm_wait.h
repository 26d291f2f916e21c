#pragma once
// Why: how a rank waits for a peer's counter in shared memory without burning a core and
// without ever hanging: a short spin (the peer is usually a few microseconds away), then
// shared futex sleeps in bounded slices; between slices it checks the process-local abort flag
// (abort() also wakes the futex), the collective deadline and whether the peer is gone. Ranks
// often oversubscribe cores, so the spin is short and yields.
// Thread-safety: any thread; the words live in a shared mapping.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

namespace runrun::shm {

enum class WaitOutcome { kReached, kAborted, kTimedOut, kPeerGone };

struct WaitLimits {
  const std::atomic<bool>* aborted = nullptr;      // this process's abort flag
  std::chrono::steady_clock::time_point deadline;  // the operation's deadline
  // Whether the awaited peer left: cheap (reads of shared words), checked before every sleep.
  std::function<bool()> peer_gone;  // may be empty
  // Whether the awaited peer's process died: costly (a /proc read per peer, ~10 us here), so
  // checked only once the wait has lasted `costly_after`, then between sleeps. A check on the
  // way to the first sleep would delay the sleep exactly when the peer is about to arrive.
  std::function<bool()> peer_died;  // may be empty
  std::chrono::microseconds costly_after{1000};
  std::chrono::microseconds spin{10};   // before the first sleep
  std::chrono::milliseconds slice{20};  // longest single sleep
};

// Whether counter value `value` has reached `target` (both wrap around at 2^32).
inline bool reached(uint32_t value, uint32_t target) {
  return static_cast<int32_t>(value - target) >= 0;
}

// Waits until `word` reached `target`; `waiters` is the word's sleeper count (the publisher
// wakes only when it is nonzero).
WaitOutcome wait_for(const std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiters,
                     uint32_t target, const WaitLimits& limits);

// Stores `value` into `word` and wakes its sleepers, if any.
void publish(std::atomic<uint32_t>& word, const std::atomic<uint32_t>& waiters, uint32_t value);

// Adds one arrival to `count`; only the arrival that makes it reach `all` wakes its sleepers
// (and only when `sleepers` says there are any): a waiter for `all` sleeps once and is woken
// once, however many arrivals came before the last. Returns whether it woke them.
bool arrive(std::atomic<uint32_t>& count, const std::atomic<uint32_t>& sleepers, uint32_t all);

}  // namespace runrun::shm
