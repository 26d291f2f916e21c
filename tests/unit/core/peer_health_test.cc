// PeerHealth alone (ranks as threads, each with its own registry): a peer that says goodbye
// fails, after the grace, the sets of this rank it belongs to and no other (a set without it
// goes on working between its members); a peer whose runtime failed fails the global set; once
// this rank is shutting down itself, a goodbye fails nothing; a peer that never reaches the
// monitor's setup makes start() fail with TimeoutError after the peer timeout instead of
// waiting for ever.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/health/peer_health.h"
#include "core/api/enqueue_checks.h"
#include "ops/local/local_backend.h"

using namespace runrun;

namespace {

struct Rank {
  Rank(std::shared_ptr<LocalWorld> world, int rank, const Config& config)
      : transport(transport_over(std::make_unique<LocalBackend>(world, rank))),
        logger(make_rank_logger(rank, world->size(), "off")),
        registry(rank, world->size()),
        health(config, transport.data->topology(), logger, registry) {}
  Transport transport;  // until the global worker takes it
  Logger logger;
  ProcessSetRegistry registry;
  PeerHealth health;
};

// Ranks as threads whose health watchers are started (a collective step, hence the threads),
// each with a global worker and a one-rank set {rank} (id 1) of its own.
class Ranks {
 public:
  explicit Ranks(int size) : config_(Config::load({{"RUNRUN_PEER_TIMEOUT", "2"}})) {
    auto world = std::make_shared<LocalWorld>(size);
    for (int r = 0; r < size; ++r) ranks_.push_back(std::make_unique<Rank>(world, r, config_));
    std::vector<std::thread> starters;
    for (auto& rank : ranks_) {
      starters.emplace_back([&rank] { rank->health.start(*rank->transport.control); });
    }
    for (auto& t : starters) t.join();
    for (auto& rank : ranks_) {
      rank->registry.set_global_worker(std::make_shared<ProcessSetWorker>(
          0, std::move(rank->transport), config_, rank->logger, nullptr));
      rank->registry.add({rank->registry.rank_in(0)}, [&](int32_t id) {
        return worker_over(std::make_shared<LocalWorld>(1), 0, id, *rank);
      });
    }
  }
  ~Ranks() {
    for (auto& rank : ranks_) rank->health.begin_shutdown();
    for (auto& rank : ranks_) {
      for (auto& worker : rank->registry.workers()) worker->fail(ErrorCode::kShutDown, "test over");
    }
  }
  Rank& operator[](int r) { return *ranks_[static_cast<size_t>(r)]; }

  // Adds the set of `members` (global ranks, sorted) on each of them; returns its id.
  int32_t add_set(const std::vector<int>& members) {
    auto world = std::make_shared<LocalWorld>(static_cast<int>(members.size()));
    int32_t id = -1;
    for (size_t i = 0; i < members.size(); ++i) {
      Rank& rank = (*this)[members[i]];
      id = rank.registry.add(members, [&](int32_t set_id) {
        return worker_over(world, static_cast<int>(i), set_id, rank);
      });
    }
    return id;
  }

 private:
  std::shared_ptr<ProcessSetWorker> worker_over(std::shared_ptr<LocalWorld> world, int rank,
                                                int32_t id, Rank& owner) {
    auto backend = std::make_unique<LocalBackend>(std::move(world), rank);
    return std::make_shared<ProcessSetWorker>(id, transport_over(std::move(backend)), config_,
                                              owner.logger, nullptr);
  }

  Config config_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

// Waits (at most 30 s) until `worker` stops, and returns why an op enqueued now is refused.
std::string stop_reason(ProcessSetWorker& worker) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (worker.running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (worker.running()) return "still running";
  Request request;
  request.name = "after";
  request.op = OpType::kBarrier;
  const TensorView none{nullptr, DataType::kUInt8, {0}};
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(request, none, none, std::make_shared<Handle>(), 0));
  try {
    worker.enqueue(std::move(entries));
  } catch (const Error& e) {  // ShutDownError (goodbye) or PeerFailureError (failed runtime)
    return e.what();
  }
  return "enqueued";
}

// A barrier through `worker` (the op every member must take part in); "" when it completed,
// else why not.
std::string barrier_through(ProcessSetWorker& worker) {
  Request request;
  request.name = "members still work";
  request.op = OpType::kBarrier;
  const TensorView none{nullptr, DataType::kUInt8, {0}};
  auto handle = std::make_shared<Handle>();
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(request, none, none, handle, 0));
  try {
    worker.enqueue(std::move(entries));
  } catch (const Error& e) {
    return e.what();
  }
  if (!handle->wait(std::chrono::seconds(30))) return "not done within 30 s";
  return handle->code() == ErrorCode::kOk ? "" : handle->error();
}

}  // namespace

TEST_CASE("a peer that said goodbye fails the sets it belongs to, and only those",
          "[core][fault][health]") {
  Ranks ranks(2);
  ranks[1].health.stop();  // rank 1 shuts its runtime down while rank 0 still runs
  std::string why = stop_reason(*ranks[0].registry.worker(0));
  CHECK(why.find("rank 1 shut its runtime down while this rank still uses process set 0") !=
        std::string::npos);
  CHECK(ranks[0].registry.worker(1)->running());  // set {0}: rank 1 is not in it
}

TEST_CASE("after a goodbye, a set without that peer goes on working between its members",
          "[core][fault][health]") {
  Ranks ranks(3);
  const int32_t pair = ranks.add_set({1, 2});
  ranks[0].health.stop();  // rank 0 leaves; ranks 1 and 2 go on in their set {1, 2}
  for (int r : {1, 2}) {
    std::string why = stop_reason(*ranks[r].registry.worker(0));
    CHECK(why.find("rank 0 shut its runtime down") != std::string::npos);
  }
  std::string outcome[3];
  std::thread other([&] { outcome[2] = barrier_through(*ranks[2].registry.worker(pair)); });
  outcome[1] = barrier_through(*ranks[1].registry.worker(pair));
  other.join();
  CHECK(outcome[1].empty());
  CHECK(outcome[2].empty());
  CHECK(ranks[1].registry.worker(pair)->running());
}

TEST_CASE("a peer whose runtime failed fails the global set, and no other",
          "[core][fault][health]") {
  Ranks ranks(2);
  // Rank 1's global set stops on an error while its process lives on (no goodbye).
  ranks[1].registry.worker(0)->fail(ErrorCode::kTimeout, "a stall shutdown on rank 1");
  std::string why = stop_reason(*ranks[0].registry.worker(0));
  CHECK(why.find("the runtime of rank 1 failed (its error is in its output): it runs no more "
                 "collectives of the global process set") != std::string::npos);
  CHECK(ranks[0].registry.worker(1)->running());  // set {0}: rank 1 is not in it
}

TEST_CASE("a goodbye fails nothing once this rank is shutting down itself",
          "[core][fault][health]") {
  Ranks ranks(2);
  ranks[0].health.begin_shutdown();
  ranks[1].health.stop();
  // Well past the grace and several heartbeats (0.5 s each): had the goodbye been judged, the
  // global worker would have stopped by now.
  std::this_thread::sleep_for(PeerHealth::kDepartureGrace + std::chrono::seconds(2));
  CHECK(ranks[0].registry.worker(0)->running());
}

TEST_CASE("start() gives up on a rank that never takes part, after the peer timeout",
          "[core][fault][health]") {
  Config config = Config::load({{"RUNRUN_PEER_TIMEOUT", "1"}});
  auto world = std::make_shared<LocalWorld>(2);
  Rank rank0(world, 0, config);
  Rank rank1(world, 1, config);  // stopped in init: never calls start()
  auto started = std::chrono::steady_clock::now();
  std::string message;
  try {
    rank0.health.start(*rank0.transport.control);
  } catch (const TimeoutError& e) {
    message = e.what();
  }
  auto waited = std::chrono::steady_clock::now() - started;
  CHECK(message.find("init on rank 0: the ranks did not all exchange their peer-monitor "
                     "addresses within RUNRUN_PEER_TIMEOUT=1 s") != std::string::npos);
  CHECK(waited >= std::chrono::seconds(1));
  CHECK(waited < std::chrono::seconds(30));
}
