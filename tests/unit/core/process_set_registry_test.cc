// ProcessSetRegistry alone: ids, lookups and their errors, and which sets a rank belongs to.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/process_set_registry.h"
#include "ops/local/local_backend.h"

using namespace runrun;

namespace {

// Workers over one-rank local worlds: they idle until destroyed (a one-rank shutdown round).
class Workers {
 public:
  std::shared_ptr<ProcessSetWorker> make(int32_t id) {
    auto backend = std::make_unique<LocalBackend>(std::make_shared<LocalWorld>(1), 0);
    return std::make_shared<ProcessSetWorker>(id, transport_over(std::move(backend)), config_,
                                              logger_, nullptr);
  }

 private:
  Config config_ = Config::load();
  Logger logger_ = make_rank_logger(0, 1, "off");
};

std::shared_ptr<ProcessSetWorker> no_worker(int32_t) { return nullptr; }

template <typename F>
std::string invalid_argument_text(F&& call) {
  try {
    call();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  FAIL("expected InvalidArgumentError");
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether `worker` stops within 10 s (fail() is seen by its thread).
bool stops(const ProcessSetWorker& worker) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (worker.running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !worker.running();
}

}  // namespace

TEST_CASE("the registry starts with the global set of every rank", "[core][registry]") {
  ProcessSetRegistry registry(2, 4);
  CHECK(registry.ranks(0) == std::vector<int>{0, 1, 2, 3});
  CHECK(registry.rank_in(0) == 2);
  CHECK(registry.find_worker(0) == nullptr);  // until the runtime gives it one
  CHECK(registry.workers().empty());
}

TEST_CASE("ids count up from 1, are never reused, and are free while the worker is made",
          "[core][registry]") {
  ProcessSetRegistry registry(0, 4);
  int32_t seen = -1;
  int32_t first = registry.add({0, 1}, [&](int32_t id) {
    seen = id;
    // Not visible yet: the set appears only once its worker exists.
    CHECK(contains(invalid_argument_text([&] { registry.ranks(id); }), "does not exist"));
    return nullptr;
  });
  CHECK(first == 1);
  CHECK(seen == 1);
  CHECK(registry.add({2, 3}, no_worker) == 2);
  CHECK(registry.remove(2) == nullptr);
  CHECK(registry.add({2, 3}, no_worker) == 3);  // the removed id stays retired
  CHECK(registry.ranks(1) == std::vector<int>{0, 1});
  CHECK(registry.ranks(3) == std::vector<int>{2, 3});
}

TEST_CASE("a set with the ranks of an existing one is refused, naming it", "[core][registry]") {
  ProcessSetRegistry registry(0, 4);
  registry.add({1, 3}, no_worker);
  CHECK(contains(invalid_argument_text([&] { registry.check_unregistered({1, 3}); }),
                 "already exists (id 1)"));
  CHECK(contains(invalid_argument_text([&] { registry.check_unregistered({0, 1, 2, 3}); }),
                 "already exists (id 0)"));
  registry.check_unregistered({1, 2});  // no throw
}

TEST_CASE("lookups of unknown sets, non-members and removals fail with what is wrong",
          "[core][registry]") {
  Workers workers;
  ProcessSetRegistry registry(1, 4);
  int32_t member = registry.add({0, 1}, [&](int32_t id) { return workers.make(id); });
  int32_t other = registry.add({2, 3}, no_worker);

  CHECK(registry.worker(member) != nullptr);
  CHECK(registry.rank_in(member) == 1);
  CHECK(registry.rank_in(other) == -1);
  CHECK(registry.rank_in(42) == -1);
  CHECK(registry.find_worker(other) == nullptr);
  CHECK(registry.find_worker(42) == nullptr);
  CHECK(contains(invalid_argument_text([&] { registry.worker(42); }),
                 "process set 42 does not exist on rank 1"));
  CHECK(contains(invalid_argument_text([&] { registry.worker(other); }),
                 "rank 1 is not a member of process set 2 (ranks [2, 3])"));
  CHECK(contains(invalid_argument_text([&] { registry.ranks(42); }),
                 "process set 42 does not exist"));
  CHECK(contains(invalid_argument_text([&] { registry.remove(42); }),
                 "remove_process_set: process set 42 does not exist"));
  CHECK(contains(invalid_argument_text([&] { registry.remove(0); }),
                 "the global process set (0) cannot be removed"));

  std::shared_ptr<ProcessSetWorker> removed = registry.remove(member);
  CHECK(removed != nullptr);
  CHECK(removed->id() == member);
  CHECK(registry.rank_in(member) == -1);
  CHECK(contains(invalid_argument_text([&] { registry.worker(member); }), "does not exist"));
}

TEST_CASE("the workers of the sets a rank belongs to, in id order", "[core][registry]") {
  Workers workers;
  ProcessSetRegistry registry(0, 4);
  registry.set_global_worker(workers.make(0));
  auto make = [&](int32_t id) { return workers.make(id); };
  int32_t low = registry.add({0, 1}, make);
  int32_t high = registry.add({0, 2, 3}, make);
  registry.add({1, 3}, no_worker);  // this rank (0) is not a member: no worker

  auto ids = [](const std::vector<std::pair<int32_t, std::shared_ptr<ProcessSetWorker>>>& sets) {
    std::vector<int32_t> out;
    for (const auto& [id, worker] : sets) {
      CHECK(worker->id() == id);
      out.push_back(id);
    }
    return out;
  };
  CHECK(ids(registry.sets_with(1)) == std::vector<int32_t>{0, low});
  CHECK(ids(registry.sets_with(3)) == std::vector<int32_t>{0, high});
  CHECK(ids(registry.sets_with(0)) == std::vector<int32_t>{0, low, high});
  std::vector<int32_t> all;
  for (const auto& worker : registry.workers()) all.push_back(worker->id());
  CHECK(all == std::vector<int32_t>{0, low, high});
}

TEST_CASE("after fail_all, every worker fails, also one added or given to set 0 later",
          "[core][registry][fault]") {
  Workers workers;
  ProcessSetRegistry registry(0, 4);
  auto early = workers.make(1);
  registry.add({0, 1}, [&](int32_t) { return early; });
  registry.fail_all(ErrorCode::kPeerFailure, "lost rank 3");
  CHECK(stops(*early));
  // A set whose creation was under way when the peer was lost.
  const int32_t late_id = registry.add({0, 2}, [&](int32_t id) { return workers.make(id); });
  auto late = registry.worker(late_id);
  CHECK(stops(*late));
  // A peer lost before the runtime gave set 0 its worker.
  auto global = workers.make(0);
  registry.set_global_worker(global);
  CHECK(stops(*global));
  // The first error is the one every later worker gets.
  registry.fail_all(ErrorCode::kShutDown, "second");
  CHECK(registry.add({0, 3}, [&](int32_t id) { return workers.make(id); }) == late_id + 1);
  CHECK(stops(*registry.worker(late_id + 1)));
}
