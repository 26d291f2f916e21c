#include "ops/shm/shm_futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace runrun::shm {
namespace {

uint32_t* address_of(const std::atomic<uint32_t>& word) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                    std::atomic<uint32_t>::is_always_lock_free,
                "a futex word must be a plain lock-free 32-bit word");
  return reinterpret_cast<uint32_t*>(const_cast<std::atomic<uint32_t>*>(&word));
}

}  // namespace

void futex_wait(const std::atomic<uint32_t>& word, uint32_t expected,
                std::chrono::nanoseconds timeout) {
  if (timeout.count() <= 0) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000000000);
  // EAGAIN (value changed), EINTR, ETIMEDOUT: all mean "re-check".
  syscall(SYS_futex, address_of(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(const std::atomic<uint32_t>& word) {
  syscall(SYS_futex, address_of(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace runrun::shm
