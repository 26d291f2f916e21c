// The shared-memory primitives of ops/shm: the segment's lifecycle (its name is gone from
// /dev/shm once every member mapped it), the wait (spin, futex, abort, deadline), and a group's
// failure paths with ranks as threads and as real processes (a killed peer is named at once,
// a stopped one at the deadline; nothing is left in /dev/shm). Bounds are generous: they only
// catch hangs.

#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "ops/shm/shm_collectives.h"
#include "ops/shm/shm_futex.h"
#include "ops/shm/shm_group.h"
#include "ops/shm/shm_segment.h"
#include "ops/shm/shm_wait.h"
#include "tests/unit/ops/rank_errors.h"
#include "tests/unit/ops/shm_file_board.h"

using runrun::DataType;
using runrun::ReduceOp;
using runrun::testing::FileBoard;
using runrun::testing::is;
using runrun::testing::message_of;
using runrun::testing::TemporaryFolder;
namespace shm = runrun::shm;

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kMustEndWithin = std::chrono::seconds(30);

bool in_dev_shm(const std::string& name) { return access(("/dev/shm" + name).c_str(), F_OK) == 0; }

shm::GroupOptions small_options(std::chrono::milliseconds timeout) {
  shm::GroupOptions options;
  options.collective_timeout = timeout;
  options.connect_timeout = std::chrono::seconds(30);
  options.capacity = 4096;
  return options;
}

// Connects `size` groups under one key, one per thread, and runs `body` on each.
std::vector<std::exception_ptr> run_group_threads(int size, const shm::GroupOptions& options,
                                                  const std::function<void(shm::Group&)>& body) {
  const TemporaryFolder folder("runrun-shm-test");
  FileBoard board(folder.path());
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        std::string why;
        auto group = shm::Group::connect(board, "g", rank, size, options, &why);
        if (!group) throw runrun::InternalError(RUNRUN_WHERE, "no group: " + why);
        body(*group);
      } catch (...) {
        errors[static_cast<size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// A child process that connects as rank 1 of a 2-rank group under `key`, takes one barrier,
// then does nothing until killed.
pid_t fork_idle_rank(const std::string& folder, const std::string& key,
                     const shm::GroupOptions& options) {
  const pid_t child = fork();
  if (child == 0) {
    try {
      FileBoard board(folder);
      auto group = shm::Group::connect(board, key, 1, 2, options, nullptr);
      if (group) shm::barrier(*group);
      for (;;) pause();
    } catch (...) {
      _exit(1);
    }
  }
  REQUIRE(child > 0);
  return child;
}

}  // namespace

TEST_CASE("shm segment: created, opened by name, unlinked while still mapped") {
  auto created = shm::Segment::create(8192);
  REQUIRE(created.name().rfind(std::string("/") + shm::kSegmentPrefix, 0) == 0);
  CHECK(in_dev_shm(created.name()));
  auto opened = shm::Segment::open(created.name(), 8192);
  created.data()[100] = 42;
  CHECK(opened.data()[100] == 42);
  created.unlink();
  CHECK_FALSE(in_dev_shm(created.name()));
  opened.data()[7] = 9;  // the memory outlives the name
  CHECK(created.data()[7] == 9);
  CHECK_THROWS_AS(shm::Segment::open(created.name(), 8192), runrun::InternalError);
}

TEST_CASE("shm segment: the creator's destructor unlinks a name nobody unlinked") {
  std::string name;
  {
    auto created = shm::Segment::create(4096);
    name = created.name();
    CHECK(in_dev_shm(name));
  }
  CHECK_FALSE(in_dev_shm(name));
}

TEST_CASE("shm group: the name is unlinked as soon as every member mapped it") {
  std::vector<std::string> names(3);
  const auto errors =
      run_group_threads(3, small_options(std::chrono::seconds(30)), [&](shm::Group& group) {
        names[static_cast<size_t>(group.rank())] = group.segment_name();
        shm::barrier(group);  // every rank returned from connect
        CHECK_FALSE(in_dev_shm(group.segment_name()));
        int32_t value = group.rank() + 1;
        shm::allreduce(group, &value, 1, DataType::kInt32, ReduceOp::kSum);
        CHECK(value == 6);
      });
  for (const auto& error : errors) {
    if (error) FAIL(message_of(error));
  }
  CHECK(names[0] == names[1]);
  CHECK(names[0] == names[2]);
}

// One word to wait on, its sleeper count, and limits that end any wait within kMustEndWithin.
struct WaitSetup {
  WaitSetup() {
    limits.aborted = &aborted;
    limits.deadline = Clock::now() + kMustEndWithin;
  }
  std::atomic<uint32_t> word{0};
  std::atomic<uint32_t> waiters{0};
  std::atomic<bool> aborted{false};
  shm::WaitLimits limits;
};

TEST_CASE_METHOD(WaitSetup, "shm wait: reaches a published value, times out, stops on abort") {
  SECTION("a publisher on another thread wakes the sleeper") {
    std::thread publisher([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past the spin
      shm::publish(word, waiters, 1);
    });
    CHECK(shm::wait_for(word, waiters, 1, limits) == shm::WaitOutcome::kReached);
    publisher.join();
  }
  SECTION("the deadline ends the wait") {
    limits.deadline = Clock::now() + std::chrono::milliseconds(100);
    CHECK(shm::wait_for(word, waiters, 1, limits) == shm::WaitOutcome::kTimedOut);
  }
  SECTION("abort from another thread ends the wait, however long the slice") {
    limits.slice = std::chrono::hours(1);  // only the wake can end the sleep in time
    std::thread aborter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      aborted = true;
      shm::futex_wake_all(word);
    });
    const auto start = Clock::now();
    CHECK(shm::wait_for(word, waiters, 1, limits) == shm::WaitOutcome::kAborted);
    CHECK(Clock::now() - start < kMustEndWithin);
    aborter.join();
  }
  SECTION("a peer that is gone ends the wait") {
    limits.peer_gone = [] { return true; };
    CHECK(shm::wait_for(word, waiters, 1, limits) == shm::WaitOutcome::kPeerGone);
  }
  SECTION("counters wrap around") {
    word = 0xfffffffeu;
    CHECK(shm::reached(word.load(), 0xfffffffeu));
    CHECK_FALSE(shm::reached(word.load(), 1u));
    CHECK(shm::reached(2u, 0xffffffffu));
  }
}

TEST_CASE_METHOD(WaitSetup,
                 "shm wait: the costly liveness check comes late, the cheap one at once") {
  SECTION("the costly check is not made before costly_after") {
    limits.spin = std::chrono::microseconds(0);
    limits.costly_after = std::chrono::hours(1);
    limits.deadline = Clock::now() + std::chrono::milliseconds(300);
    int calls = 0;
    limits.peer_died = [&] {
      ++calls;
      return true;
    };
    CHECK(shm::wait_for(word, waiters, 1, limits) == shm::WaitOutcome::kTimedOut);
    CHECK(calls == 0);
  }
  SECTION("once due, a dead peer ends the wait; the cheap check is made at once") {
    limits.costly_after = std::chrono::milliseconds(50);
    limits.slice = std::chrono::hours(1);  // the sleep must end for the due check by itself
    limits.peer_died = [] { return true; };
    CHECK(shm::wait_for(word, waiters, 1, limits) == shm::WaitOutcome::kPeerGone);
    limits.costly_after = std::chrono::hours(1);
    limits.peer_gone = [] { return true; };
    CHECK(shm::wait_for(word, waiters, 1, limits) == shm::WaitOutcome::kPeerGone);
  }
}

TEST_CASE("shm arrival counter: only the arrival that completes a step wakes the sleepers") {
  std::atomic<uint32_t> count{0};
  std::atomic<uint32_t> sleepers{1};  // as if a waiter slept
  SECTION("earlier arrivals wake nobody, the last one does; nobody asleep: no wake") {
    CHECK_FALSE(shm::arrive(count, sleepers, 3));
    CHECK_FALSE(shm::arrive(count, sleepers, 3));
    CHECK(shm::arrive(count, sleepers, 3));
    CHECK(count.load() == 3);
    sleepers = 0;
    CHECK_FALSE(shm::arrive(count, sleepers, 4));
  }
  SECTION("the step's total wraps around with the counter") {
    count = 0xfffffffeu;
    const uint32_t all = 0xfffffffeu + 3u;  // 1 after wrapping
    CHECK_FALSE(shm::arrive(count, sleepers, all));
    CHECK_FALSE(shm::reached(count.load(), all));
    CHECK_FALSE(shm::arrive(count, sleepers, all));
    CHECK(shm::arrive(count, sleepers, all));
    CHECK(shm::reached(count.load(), all));
  }
  SECTION("a waiter that sleeps for good is released by the last of three arrivals") {
    sleepers = 0;
    std::atomic<bool> aborted{false};
    shm::WaitLimits limits;
    limits.aborted = &aborted;
    limits.deadline = Clock::now() + kMustEndWithin;  // a missing wake ends as kTimedOut
    limits.spin = std::chrono::microseconds(0);
    limits.slice = std::chrono::hours(1);  // only a wake ends a sleep in time
    std::thread arrivals([&] {
      for (int i = 0; i < 3; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        shm::arrive(count, sleepers, 3);
      }
    });
    CHECK(shm::wait_for(count, sleepers, 3, limits) == shm::WaitOutcome::kReached);
    arrivals.join();
  }
}

TEST_CASE("shm group: a peer leaving mid-step is named by every waiting rank, whichever it is") {
  // 4 ranks: rank 2 leaves (aborts) while ranks 0, 1 and 3 wait in the same step; each names
  // rank 2, whether or not the peers it would look at first had arrived.
  std::atomic<int> waiting{0};
  std::atomic<shm::Group*> rank2{nullptr};
  std::atomic<bool> left{false};
  std::thread aborter([&] {
    while (waiting.load() < 3 || rank2.load() == nullptr) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let them sleep
    rank2.load()->abort();
    left = true;
  });
  const auto start = Clock::now();
  const auto errors =
      run_group_threads(4, small_options(std::chrono::hours(1)), [&](shm::Group& group) {
        shm::barrier(group);
        if (group.rank() == 2) {
          rank2 = &group;  // never takes the second barrier: the aborter makes it leave
          while (!left.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return;
        }
        ++waiting;
        shm::barrier(group);
      });
  aborter.join();
  CHECK(Clock::now() - start < kMustEndWithin);
  for (int r : {0, 1, 3}) {
    REQUIRE(errors[static_cast<size_t>(r)]);
    CHECK(is<runrun::PeerFailureError>(errors[static_cast<size_t>(r)]));
    CHECK_THAT(message_of(errors[static_cast<size_t>(r)]),
               Catch::Contains("barrier on rank " + std::to_string(r)) &&
                   Catch::Contains("lost rank 2: it left the shared-memory group"));
  }
  CHECK_FALSE(errors[2]);
}

TEST_CASE("shm group: abort ends a blocked step with ShutDownError; the peer sees it leave") {
  std::atomic<shm::Group*> rank0{nullptr};
  std::atomic<bool> rank0_done{false};
  std::thread aborter([&] {
    while (rank0.load() == nullptr) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    rank0.load()->abort();
  });
  const auto start = Clock::now();
  const auto errors =
      run_group_threads(2, small_options(std::chrono::hours(1)), [&](shm::Group& group) {
        if (group.rank() == 0) {
          rank0 = &group;
          try {
            shm::barrier(group);  // rank 1 is not there yet
          } catch (const runrun::ShutDownError&) {
            rank0_done = true;
            throw;
          }
        } else {
          while (!rank0_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          shm::barrier(group);
        }
      });
  aborter.join();
  CHECK(Clock::now() - start < kMustEndWithin);
  REQUIRE(errors[0]);
  CHECK(is<runrun::ShutDownError>(errors[0]));
  CHECK_THAT(message_of(errors[0]),
             Catch::Contains("barrier on rank 0") && Catch::Contains("aborted"));
  REQUIRE(errors[1]);
  CHECK(is<runrun::PeerFailureError>(errors[1]));
  CHECK_THAT(message_of(errors[1]),
             Catch::Contains("barrier on rank 1") && Catch::Contains("lost rank 0"));
}

TEST_CASE("shm group: the collective timeout names the missing rank; the group stays broken") {
  std::atomic<bool> rank0_done{false};
  const auto errors =
      run_group_threads(2, small_options(std::chrono::milliseconds(200)), [&](shm::Group& group) {
        if (group.rank() == 1) {
          while (!rank0_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return;
        }
        std::vector<float> values(5000, 1.0f);  // pipelined: several steps
        try {
          shm::allreduce(group, values.data(), values.size(), DataType::kFloat32, ReduceOp::kSum);
        } catch (const runrun::TimeoutError& e) {
          CHECK_THAT(e.what(), Catch::Contains("allreduce on rank 0") &&
                                   Catch::Contains("timed out after 200 ms") &&
                                   Catch::Contains("waiting for rank 1"));
          rank0_done = true;
          shm::barrier(group);  // broken: throws again
        }
        rank0_done = true;
      });
  REQUIRE(errors[0]);
  CHECK(is<runrun::TimeoutError>(errors[0]));
  CHECK_THAT(message_of(errors[0]), Catch::Contains("barrier on rank 0") &&
                                        Catch::Contains("unusable after an earlier failure"));
  CHECK_FALSE(errors[1]);
}

TEST_CASE("shm group over real processes: a killed peer is named at once, nothing is left") {
  const TemporaryFolder folder("runrun-shm-test");
  auto options = small_options(std::chrono::hours(1));  // only liveness can end it in time
  const pid_t child = fork_idle_rank(folder.path(), "killed", options);
  FileBoard board(folder.path());
  std::string why;
  auto group = shm::Group::connect(board, "killed", 0, 2, options, &why);
  REQUIRE(group);
  const std::string name = group->segment_name();
  shm::barrier(*group);
  CHECK_FALSE(in_dev_shm(name));
  std::thread killer([child] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(child, SIGKILL);
  });
  const auto start = Clock::now();
  std::string message;
  try {
    shm::barrier(*group);
  } catch (const runrun::PeerFailureError& e) {
    message = e.what();
  }
  killer.join();
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(Clock::now() - start < kMustEndWithin);
  CHECK_THAT(message, Catch::Contains("barrier on rank 0") &&
                          Catch::Contains("lost rank 1: its process (pid " + std::to_string(child) +
                                          ") died"));
  group.reset();
  CHECK_FALSE(in_dev_shm(name));
}

TEST_CASE("shm group over real processes: a peer dead before the step began is named too") {
  // Its process is found gone by the costly check, which a wait makes only after
  // WaitLimits::costly_after: the step must still end, naming it.
  const TemporaryFolder folder("runrun-shm-test");
  auto options = small_options(std::chrono::hours(1));  // only liveness can end it in time
  const pid_t child = fork_idle_rank(folder.path(), "dead", options);
  FileBoard board(folder.path());
  auto group = shm::Group::connect(board, "dead", 0, 2, options, nullptr);
  REQUIRE(group);
  shm::barrier(*group);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  const auto start = Clock::now();
  std::string message;
  try {
    shm::barrier(*group);
  } catch (const runrun::PeerFailureError& e) {
    message = e.what();
  }
  CHECK(Clock::now() - start < kMustEndWithin);
  CHECK_THAT(message,
             Catch::Contains("lost rank 1: its process (pid " + std::to_string(child) + ") died"));
}

TEST_CASE("shm group over real processes: a stopped peer ends at the deadline, naming it") {
  const TemporaryFolder folder("runrun-shm-test");
  auto options = small_options(std::chrono::milliseconds(500));
  const pid_t child = fork_idle_rank(folder.path(), "stopped", options);
  FileBoard board(folder.path());
  auto group = shm::Group::connect(board, "stopped", 0, 2, options, nullptr);
  REQUIRE(group);
  shm::barrier(*group);
  kill(child, SIGSTOP);
  const auto start = Clock::now();
  std::string message;
  try {
    std::vector<double> values(3000, 2.0);
    shm::allreduce(*group, values.data(), values.size(), DataType::kFloat64, ReduceOp::kMax);
  } catch (const runrun::TimeoutError& e) {
    message = e.what();
  }
  CHECK(Clock::now() - start < kMustEndWithin);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK_THAT(message,
             Catch::Contains("timed out after 500 ms") && Catch::Contains("waiting for rank 1"));
  CHECK_FALSE(shm::segment_exists_with_prefix(std::string(shm::kSegmentPrefix) +
                                              std::to_string(getpid()) + "-"));
}

TEST_CASE("shm collectives: pieces larger than a slot, every op, same bits on every rank") {
  const auto errors =
      run_group_threads(3, small_options(std::chrono::seconds(60)), [&](shm::Group& group) {
        const int r = group.rank();
        // allreduce of 10000 floats (40 KB: ten 4 KiB pieces); values whose sum depends on order.
        std::vector<float> values(10000);
        for (size_t i = 0; i < values.size(); ++i)
          values[i] = 1.0f / static_cast<float>(i + 1 + r * 7);
        shm::allreduce(group, values.data(), values.size(), DataType::kFloat32, ReduceOp::kSum);
        std::vector<float> first(values.size());
        if (r == 0) first = values;
        shm::broadcast(group, first.data(), first.size() * sizeof(float), 0);
        CHECK(std::memcmp(first.data(), values.data(), values.size() * sizeof(float)) == 0);
        // allgatherv of unequal blocks, larger than a slot.
        const std::vector<size_t> lengths{5000, 0, 9001};
        std::string mine(lengths[static_cast<size_t>(r)], static_cast<char>('a' + r));
        std::string all(14001, '?');
        shm::allgatherv(group, mine.data(), mine.size(), all.data(), lengths);
        CHECK(all == std::string(5000, 'a') + std::string(9001, 'c'));
        // alltoallv: rank r sends (p + 1) * 3000 bytes of 'r' to rank p.
        std::vector<size_t> send, recv;
        for (int p = 0; p < 3; ++p) {
          send.push_back(static_cast<size_t>(p + 1) * 3000);
          recv.push_back(static_cast<size_t>(r + 1) * 3000);
        }
        std::string out(static_cast<size_t>(r + 1) * 9000, '?');
        std::string in;
        for (int p = 0; p < 3; ++p)
          in += std::string(send[static_cast<size_t>(p)], static_cast<char>('0' + r));
        shm::alltoallv(group, in.data(), send, out.data(), recv);
        std::string expected;
        for (int p = 0; p < 3; ++p)
          expected += std::string(recv[static_cast<size_t>(p)], static_cast<char>('0' + p));
        CHECK(out == expected);
        // reducescatter in place, blocks larger than a slot's share.
        std::vector<int64_t> counts{1500, 2, 4000};
        std::vector<int64_t> data(5502);
        for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int64_t>(i) * (r + 1);
        shm::reducescatter(group, data.data(), data.data(), {1500, 2, 4000}, DataType::kInt64,
                           ReduceOp::kSum);
        const size_t offset = r == 0 ? 0 : (r == 1 ? 1500 : 1502);
        for (size_t i = 0; i < static_cast<size_t>(counts[static_cast<size_t>(r)]); ++i) {
          if (data[i] != static_cast<int64_t>(offset + i) * 6) FAIL("reducescatter element " << i);
        }
        // Strings for the control channel: longer than a slot, one empty.
        const std::string text =
            r == 1 ? std::string() : std::string(7000 + r, static_cast<char>('x' + r));
        const auto strings = shm::allgather_strings(group, "strings", text);
        REQUIRE(strings.size() == 3);
        CHECK(strings[0] == std::string(7000, 'x'));
        CHECK(strings[1].empty());
        CHECK(strings[2] == std::string(7002, 'z'));
      });
  for (const auto& error : errors) {
    if (error) FAIL(message_of(error));
  }
}
