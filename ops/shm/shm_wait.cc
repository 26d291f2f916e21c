#include "ops/shm/shm_wait.h"

#include <sched.h>

#include <algorithm>

#include "ops/shm/shm_futex.h"

namespace runrun::shm {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

WaitOutcome wait_for(const std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiters,
                     uint32_t target, const WaitLimits& limits) {
  using Clock = std::chrono::steady_clock;
  const auto is_aborted = [&] {
    return limits.aborted != nullptr && limits.aborted->load(std::memory_order_acquire);
  };
  if (reached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
  const auto start = Clock::now();
  const auto spin_until = start + limits.spin;
  for (int i = 0;; ++i) {
    for (int k = 0; k < 64; ++k) {
      if (reached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
      cpu_relax();
    }
    if (is_aborted()) return WaitOutcome::kAborted;
    if (Clock::now() >= spin_until) break;
    if (i % 4 == 3) sched_yield();  // let a peer sharing this core run
  }
  const auto costly_from = start + limits.costly_after;
  for (;;) {
    if (is_aborted()) return WaitOutcome::kAborted;
    if ((limits.peer_gone && limits.peer_gone()) ||
        (limits.peer_died && Clock::now() >= costly_from && limits.peer_died())) {
      // The peer may have published its last step before leaving.
      return reached(word.load(std::memory_order_acquire), target) ? WaitOutcome::kReached
                                                                   : WaitOutcome::kPeerGone;
    }
    const auto now = Clock::now();
    if (now >= limits.deadline) {
      return reached(word.load(std::memory_order_acquire), target) ? WaitOutcome::kReached
                                                                   : WaitOutcome::kTimedOut;
    }
    auto sleep = std::min<Clock::duration>(limits.slice, limits.deadline - now);
    // The first costly check is due at costly_from: wake for it then, not a whole slice later.
    if (limits.peer_died && now < costly_from) {
      sleep = std::min<Clock::duration>(sleep, costly_from - now);
    }
    // Announce the sleep, then re-check (sequentially consistent on both sides: the publisher
    // stores the word, then reads `waiters`), then sleep only while the word is unchanged.
    waiters.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t value = word.load(std::memory_order_seq_cst);
    if (!reached(value, target) && !is_aborted()) futex_wait(word, value, sleep);
    waiters.fetch_sub(1, std::memory_order_seq_cst);
    if (reached(word.load(std::memory_order_acquire), target)) return WaitOutcome::kReached;
  }
}

void publish(std::atomic<uint32_t>& word, const std::atomic<uint32_t>& waiters, uint32_t value) {
  word.store(value, std::memory_order_seq_cst);
  if (waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(word);
}

bool arrive(std::atomic<uint32_t>& count, const std::atomic<uint32_t>& sleepers, uint32_t all) {
  const uint32_t now = count.fetch_add(1, std::memory_order_seq_cst) + 1;
  if (now != all || sleepers.load(std::memory_order_seq_cst) == 0) return false;
  futex_wake_all(count);
  return true;
}

}  // namespace runrun::shm
