// PeerHealth alone (two ranks as threads, each with its own registry): a peer that says goodbye
// fails, after the grace, the sets of this rank it belongs to and no other; once this rank is
// shutting down itself, a goodbye fails nothing; a peer that never reaches the monitor's setup
// makes start() fail with TimeoutError after the peer timeout instead of waiting for ever.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/peer_health.h"
#include "core/enqueue_checks.h"
#include "ops/local/local_backend.h"

using namespace runrun;

namespace {

struct Rank {
  Rank(std::shared_ptr<LocalWorld> world, int rank, const Config& config)
      : transport(transport_over(std::make_unique<LocalBackend>(std::move(world), rank))),
        logger(make_rank_logger(rank, 2, "off")),
        registry(rank, 2),
        health(config, transport.data->topology(), logger, registry) {}
  Transport transport;  // until the global worker takes it
  Logger logger;
  ProcessSetRegistry registry;
  PeerHealth health;
};

// Two ranks whose health watchers are started (a collective step, hence the threads), each
// with a global worker and a one-rank set {rank} (id 1) of its own.
class TwoRanks {
 public:
  TwoRanks() : config_(Config::load({{"RUNRUN_PEER_TIMEOUT", "2"}})) {
    auto world = std::make_shared<LocalWorld>(2);
    for (int r = 0; r < 2; ++r) ranks_.push_back(std::make_unique<Rank>(world, r, config_));
    std::vector<std::thread> starters;
    for (auto& rank : ranks_) {
      starters.emplace_back([&rank] { rank->health.start(*rank->transport.control); });
    }
    for (auto& t : starters) t.join();
    for (auto& rank : ranks_) {
      rank->registry.set_global_worker(std::make_shared<ProcessSetWorker>(
          0, std::move(rank->transport), config_, rank->logger, nullptr));
      rank->registry.add({rank->registry.rank_in(0)}, [&](int32_t id) {
        auto alone = std::make_unique<LocalBackend>(std::make_shared<LocalWorld>(1), 0);
        return std::make_shared<ProcessSetWorker>(id, transport_over(std::move(alone)), config_,
                                                  rank->logger, nullptr);
      });
    }
  }
  ~TwoRanks() {
    for (auto& rank : ranks_) rank->health.begin_shutdown();
    for (auto& rank : ranks_) {
      for (auto& worker : rank->registry.workers()) worker->fail(ErrorCode::kShutDown, "test over");
    }
  }
  Rank& operator[](int r) { return *ranks_[static_cast<size_t>(r)]; }

 private:
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

}  // namespace

TEST_CASE("a peer that said goodbye fails the sets it belongs to, and only those",
          "[core][fault][health]") {
  TwoRanks ranks;
  ranks[1].health.stop();  // rank 1 shuts its runtime down while rank 0 still runs
  std::string why = stop_reason(*ranks[0].registry.worker(0));
  CHECK(why.find("rank 1 shut its runtime down while this rank still uses process set 0") !=
        std::string::npos);
  CHECK(ranks[0].registry.worker(1)->running());  // set {0}: rank 1 is not in it
}

TEST_CASE("a peer whose runtime failed fails the global set, and no other",
          "[core][fault][health]") {
  TwoRanks ranks;
  // Rank 1's global set stops on an error while its process lives on (no goodbye).
  ranks[1].registry.worker(0)->fail(ErrorCode::kTimeout, "a stall shutdown on rank 1");
  std::string why = stop_reason(*ranks[0].registry.worker(0));
  CHECK(why.find("the runtime of rank 1 failed (its error is in its output): it runs no more "
                 "collectives of the global process set") != std::string::npos);
  CHECK(ranks[0].registry.worker(1)->running());  // set {0}: rank 1 is not in it
}

TEST_CASE("a goodbye fails nothing once this rank is shutting down itself",
          "[core][fault][health]") {
  TwoRanks ranks;
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
