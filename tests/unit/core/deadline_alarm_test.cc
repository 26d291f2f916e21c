// DeadlineAlarm: runs its action once when still alive at the deadline, never after it was
// destroyed in time, and its destructor does not wait for the deadline.
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <thread>

#include "common/deadline_alarm.h"

using runrun::DeadlineAlarm;
using Clock = std::chrono::steady_clock;

TEST_CASE("an alarm still alive at its deadline runs its action once", "[core][alarm]") {
  std::atomic<int> runs{0};
  DeadlineAlarm alarm(std::chrono::milliseconds(20), [&] { runs++; });
  auto give_up = Clock::now() + std::chrono::seconds(30);
  while (runs.load() == 0 && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(runs.load() == 1);
  CHECK(alarm.fired());
}

TEST_CASE("an alarm destroyed before its deadline never runs and does not wait for it",
          "[core][alarm]") {
  std::atomic<int> runs{0};
  auto start = Clock::now();
  {
    DeadlineAlarm alarm(std::chrono::hours(1), [&] { runs++; });
    CHECK_FALSE(alarm.fired());
  }
  CHECK(Clock::now() - start < std::chrono::minutes(1));
  CHECK(runs.load() == 0);
}
