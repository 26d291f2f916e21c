#include "common/fork_generation.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace runrun {
namespace {

std::atomic<uint64_t> g_generation{0};
std::atomic<pid_t> g_pid{0};

void on_fork_child() {
  g_pid.store(getpid(), std::memory_order_relaxed);
  g_generation.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_pid.store(getpid(), std::memory_order_relaxed);
    pthread_atfork(nullptr, nullptr, on_fork_child);
  });
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
