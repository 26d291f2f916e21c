// The timeline under several threads: concurrent events, start/stop racing with events, and a
// hidden measurement of what an event costs.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "core/timeline/timeline.h"
#include "tests/unit/timeline/trace_file.h"

namespace runrun {
namespace {

using test::events_of;
using test::read_trace;
using test::TempPath;

// One op's life as the core reports it, on the row of `tensor`: three top-level spans, one
// nested copy and one instant on a row every thread shares.
void emit_op(Timeline& timeline, const std::string& tensor, int i) {
  timeline.begin(tensor, "NEGOTIATE", {{"late_ranks", std::to_string(i % 4)}});
  timeline.end(tensor, "NEGOTIATE");
  timeline.begin(tensor, "QUEUE");
  timeline.end(tensor, "QUEUE");
  timeline.begin(tensor, "ALLREDUCE", {{"fused_with", "2"}, {"bytes", std::to_string(i * 4)}});
  timeline.begin(tensor, "MEMCPY_IN_FUSION_BUFFER");
  timeline.end(tensor, "MEMCPY_IN_FUSION_BUFFER");
  timeline.end(tensor, "ALLREDUCE");
  timeline.instant("shared", "CYCLE");
}

std::string tensor_name(int thread, int i) {
  return "thread" + std::to_string(thread) + "/grad" + std::to_string(i % 8);
}

TEST_CASE("events from several threads interleave into one valid, balanced trace") {
  constexpr int kThreads = 4;
  constexpr int kOps = 500;
  TempPath path("timeline_threads");
  Timeline timeline;
  timeline.start(path.str(), 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) emit_op(timeline, tensor_name(t, i), i);
    });
  }
  for (auto& thread : threads) thread.join();
  timeline.stop();

  auto events = read_trace(path.str());
  CHECK(test::check_balanced(events) == size_t{kThreads} * kOps * 4);
  CHECK(events_of(events, "E").size() == size_t{kThreads} * kOps * 4);
  CHECK(events_of(events, "i").size() == size_t{kThreads} * kOps);
  CHECK(timeline.dropped_events() == 0);
  std::set<std::string> expected{"shared"};
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < 8; ++i) expected.insert(tensor_name(t, i));
  }
  std::set<std::string> named;
  std::set<int> tids;
  for (const auto& [tid, name] : test::row_names(events)) {
    named.insert(name);
    tids.insert(tid);
  }
  CHECK(named == expected);
  CHECK(*tids.begin() == 1);
  CHECK(*tids.rbegin() == static_cast<int>(expected.size()));  // small, dense tids
}

TEST_CASE("start and stop racing with events leave every file valid and balanced") {
  constexpr int kThreads = 3;
  constexpr int kFiles = 12;
  std::vector<std::unique_ptr<TempPath>> paths;
  for (int f = 0; f < kFiles; ++f) paths.push_back(std::make_unique<TempPath>("timeline_race"));
  Timeline timeline;
  std::atomic<bool> done{false};
  std::atomic<int> ops_seen_by_main{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; !done.load(); ++i) {
        emit_op(timeline, tensor_name(t, i), i);
        ops_seen_by_main.fetch_add(1);
      }
    });
  }
  for (int f = 0; f < kFiles; ++f) {
    timeline.start(paths[f]->str(), 0);
    int target = ops_seen_by_main.load() + 200;  // let events flow into every file
    while (ops_seen_by_main.load() < target) std::this_thread::yield();
    if (f % 3 == 2) timeline.stop();  // some files stopped, others replaced by the next start
  }
  done = true;
  for (auto& thread : threads) thread.join();
  timeline.stop();
  for (const auto& path : paths) {
    auto events = read_trace(path->str());
    test::check_balanced(events);
    CHECK(events.size() > 2);
  }
}

// Run by hand: timeline_unit_tests "[.perf]". Prints nanoseconds per event; asserts nothing.
TEST_CASE("cost of an event, active and inactive", "[.perf]") {
  constexpr int kEvents = 1'000'000;
  const std::string tensor = "model/layer12/attention/query/kernel";
  auto measure = [&](Timeline& timeline) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kEvents / 2; ++i) {
      timeline.begin(tensor, "ALLREDUCE");
      timeline.end(tensor, "ALLREDUCE");
    }
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
           kEvents;
  };
  Timeline inactive;
  double off = measure(inactive);
  TempPath path("timeline_perf");
  Timeline active;
  active.start(path.str(), 0);
  double on = measure(active);
  active.stop();
  std::cout << "timeline event cost: inactive " << off << " ns, active " << on
            << " ns (begin/end pairs, one thread, " << kEvents << " events)\n";
  SUCCEED();
}

}  // namespace
}  // namespace runrun
