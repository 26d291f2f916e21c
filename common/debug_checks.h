#pragma once
// Why: runrun's internal contracts, above all "owned by the background thread" in the headers of
// core/ (the worker's controller, executor, fusion buffer, ...), were prose only; a call from
// the wrong thread is a data race that shows up rarely and far away. These checks say at once
// which contract broke, where, and on which threads. They are programmer-bug checks (never user
// input or peer behaviour, which throw: errors.h): a violation prints one line to stderr and
// aborts. Compiled in when the build's RUNRUN_DEBUG_CHECKS is 1 (CMake option
// RUNRUN_DEBUG_CHECKS, on with the tests: the build `make test` runs; off in `pip install .`);
// otherwise they compile to nothing.
// Thread-safety: OwnerThread may be checked from any thread (one atomic); it binds to the first
// thread that checks it, so an object may be made on one thread and handed to its owner.

#include <atomic>
#include <thread>

#include "runrun/build_config.h"

namespace runrun {

// Whether this build checks its contracts (RUNRUN_DEBUG_CHECKS).
inline constexpr bool kDebugChecks = RUNRUN_DEBUG_CHECKS != 0;

// The thread that owns some state. The first check binds it; release() unbinds it, for a
// planned hand-over to another thread (the next check binds that one).
class OwnerThread {
 public:
  // True when the calling thread owns the state (binding it when nobody does yet).
  bool is_owner_or_bind() {
    const std::thread::id me = std::this_thread::get_id();
    std::thread::id expected{};
    return owner_.compare_exchange_strong(expected, me) || expected == me;
  }
  void release() { owner_.store(std::thread::id{}); }
  std::thread::id owner() const { return owner_.load(); }

 private:
  std::atomic<std::thread::id> owner_{};
};

// Prints "runrun: debug check failed at file:line: what" and the detail to stderr, then aborts.
[[noreturn]] void debug_check_failed(const char* file, int line, const char* what,
                                     const char* detail);
// The same for an owner-thread contract: names the owner and the calling thread.
[[noreturn]] void owner_thread_violated(const char* file, int line, const char* owner_name,
                                        const OwnerThread& owner);

}  // namespace runrun

#if RUNRUN_DEBUG_CHECKS
// Aborts unless `condition` holds; `detail` (a C string) says what the broken contract is.
#define RUNRUN_DCHECK(condition, detail)                                                    \
  do {                                                                                      \
    if (!(condition)) ::runrun::debug_check_failed(__FILE__, __LINE__, #condition, detail); \
  } while (0)
// Aborts unless the calling thread owns `owner` (an OwnerThread; the first check binds it).
#define RUNRUN_CHECK_OWNER_THREAD(owner)                                    \
  do {                                                                      \
    if (!(owner).is_owner_or_bind())                                        \
      ::runrun::owner_thread_violated(__FILE__, __LINE__, #owner, (owner)); \
  } while (0)
#else
#define RUNRUN_DCHECK(condition, detail) \
  do {                                   \
  } while (0)
#define RUNRUN_CHECK_OWNER_THREAD(owner) \
  do {                                   \
  } while (0)
#endif
