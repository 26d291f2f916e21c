#include "ops/mpi/mpi_waiter.h"

#include <sys/prctl.h>

#include <algorithm>
#include <string>
#include <thread>

#include "common/errors.h"
#include "ops/mpi/mpi_check.h"

namespace runrun::mpi {
namespace {

// Open MPI's non-blocking collectives progress only inside MPI_Test, so the waiter polls: busy
// for the first 50 us, then yielding the core between polls up to 2 ms (cheap when others need
// the core, responsive when they do not), then sleeping 20 us doubling up to 200 us. The thread's
// timer slack is lowered so that short sleeps are short (the default 50 us slack made an 8 us
// sleep last 60-90 us here).
constexpr std::chrono::microseconds kSpinWindow{50};
constexpr std::chrono::microseconds kYieldWindow{2000};
constexpr std::chrono::microseconds kFirstSleep{20};
constexpr std::chrono::microseconds kLongestSleep{200};

void lower_timer_slack() {
  thread_local bool lowered = false;
  if (!lowered) {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);  // 1 us; best effort
    lowered = true;
  }
}

}  // namespace

MpiWaiter::MpiWaiter(int rank, std::chrono::milliseconds collective_timeout)
    : rank_(rank), timeout_(collective_timeout) {}

void MpiWaiter::check_usable(const char* op) const {
  if (aborted_.load()) {
    throw ShutDownError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                          ": the mpi backend was aborted (runtime shutting down)");
  }
  if (!broken_.empty()) {
    throw TimeoutError(RUNRUN_WHERE,
                       std::string(op) + " on rank " + std::to_string(rank_) +
                           ": the mpi backend is unusable after an earlier failure: " + broken_);
  }
}

void MpiWaiter::fail_timeout(const char* op, Clock::duration waited) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited).count();
  broken_ = std::string(op) + " on rank " + std::to_string(rank_) + " did not complete in " +
            std::to_string(ms) + " ms (collective timeout " + std::to_string(timeout_.count()) +
            " ms)";
  throw TimeoutError(RUNRUN_WHERE, broken_ +
                                       ": a peer is stuck or gone; check the other ranks, or raise "
                                       "RUNRUN_COLLECTIVE_TIMEOUT if they are just slow");
}

void MpiWaiter::wait(MPI_Request& request, const char* op) {
  std::vector<MPI_Request> requests{request};
  wait_until(requests, op, Clock::now(), Clock::time_point::max());
  request = requests[0];
}

bool MpiWaiter::test(std::vector<MPI_Request>& requests, const char* op, Clock::time_point posted) {
  int done = 0;
  RUNRUN_MPI_CHECK(
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
      op, rank_);
  if (done) return true;
  check_alive(op, posted);
  return false;
}

void MpiWaiter::check_alive(const char* op, Clock::time_point posted) {
  check_usable(op);
  const auto waited = Clock::now() - posted;
  if (timeout_.count() > 0 && waited > timeout_) fail_timeout(op, waited);
}

bool MpiWaiter::wait_until(std::vector<MPI_Request>& requests, const char* op,
                           Clock::time_point posted, Clock::time_point until) {
  const auto start = Clock::now();
  auto sleep = kFirstSleep;
  for (;;) {
    if (test(requests, op, posted)) return true;
    const auto now = Clock::now();
    if (now >= until) return false;
    const auto waited = now - start;
    if (waited < kSpinWindow) continue;
    if (waited < kYieldWindow) {
      std::this_thread::yield();
      continue;
    }
    lower_timer_slack();
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kLongestSleep);
  }
}

void MpiWaiter::abandon(const char* op) {
  if (!broken_.empty() || aborted_.load()) return;
  broken_ = std::string(op) + " on rank " + std::to_string(rank_) +
            " was abandoned before it completed (its completion was destroyed unwaited)";
}

}  // namespace runrun::mpi
