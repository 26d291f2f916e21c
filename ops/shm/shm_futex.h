#pragma once
// Why: ranks of one host wait for each other on words of a shared segment; a sleeping waiter
// must be woken by another process, so these are the shared (not FUTEX_PRIVATE) futex calls.
// Thread-safety: any thread; `word` must be 4-byte aligned (in a MAP_SHARED mapping to reach
// other processes).

#include <atomic>
#include <chrono>
#include <cstdint>

namespace runrun::shm {

// Sleeps while `word` holds `expected`, at most `timeout`, or until woken (spurious returns
// are allowed: the caller re-checks what it waits for).
void futex_wait(const std::atomic<uint32_t>& word, uint32_t expected,
                std::chrono::nanoseconds timeout);

// Wakes every thread (of any process) sleeping on `word`.
void futex_wake_all(const std::atomic<uint32_t>& word);

}  // namespace runrun::shm
