#include "common/fork_generation.h"

#include <pthread.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <mutex>

namespace runrun {
namespace {

std::atomic<uint64_t> g_generation{0};
std::atomic<pid_t> g_pid{0};
// Registered fds, each stored as fd + 1 (0, the zero-initialized value: a free slot). Lock-free:
// the fork handler may only do async-signal-safe things, and a lock held by a thread that does
// not exist in the child would never be released.
std::array<std::atomic<int>, kMaxForkClosedFds> g_closed_in_children{};

void on_fork_child() {
  g_pid.store(getpid(), std::memory_order_relaxed);
  g_generation.fetch_add(1, std::memory_order_relaxed);
  for (auto& slot : g_closed_in_children) {
    const int stored = slot.exchange(0, std::memory_order_relaxed);
    if (stored > 0) close(stored - 1);
  }
}

}  // namespace

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_pid.store(getpid(), std::memory_order_relaxed);
    pthread_atfork(nullptr, nullptr, on_fork_child);
  });
}

void close_in_forked_children(int fd) {
  watch_forks();
  for (auto& slot : g_closed_in_children) {
    int free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, fd + 1)) return;
  }
}

void keep_in_forked_children(int fd) {
  for (auto& slot : g_closed_in_children) {
    int registered = fd + 1;
    if (slot.compare_exchange_strong(registered, 0)) return;
  }
}

ForkStamp fork_stamp() {
  return {g_generation.load(std::memory_order_relaxed), g_pid.load(std::memory_order_relaxed)};
}

std::string forked_child_message(const std::string& what, const ForkStamp& stamp) {
  return what + ": this process (pid " + std::to_string(getpid()) + ") was forked from pid " +
         std::to_string(stamp.pid) +
         " after runrun was initialized there; a forked child has a copy of the runtime but "
         "not its background thread or its connections, so it cannot run collectives (the "
         "parent's runtime is unaffected): run them in the parent process";
}

}  // namespace runrun
