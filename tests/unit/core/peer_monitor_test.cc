// The peer monitor: a killed peer is noticed at once, a frozen one after the timeout, a clean
// goodbye never counts as a loss; and the runtime turns a loss into errors on every op.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/health/peer_monitor.h"
#include "tests/unit/core/rank_threads.h"

using namespace runrun;

namespace {

struct Loss {
  int rank = -1;
  std::string why;
  std::chrono::steady_clock::time_point when;
};

class MonitorGroup {
 public:
  MonitorGroup(int size, std::chrono::milliseconds timeout, bool loopback_only = false)
      : losses_(static_cast<size_t>(size)) {
    auto logger = make_rank_logger(0, size, "off");
    std::vector<std::string> addresses;
    for (int r = 0; r < size; ++r) {
      monitors_.push_back(std::make_unique<PeerMonitor>(r, size, std::chrono::milliseconds(50),
                                                        timeout, logger, loopback_only));
      addresses.push_back(monitors_.back()->address());
    }
    std::vector<std::thread> starters;
    for (int r = 0; r < size; ++r) {
      starters.emplace_back([&, r] {
        auto on_lost = [this, r](int lost, PeerLoss, const std::string& why) {
          std::lock_guard<std::mutex> lock(mutex_);
          losses_[static_cast<size_t>(r)] = Loss{lost, why, std::chrono::steady_clock::now()};
        };
        monitors_[static_cast<size_t>(r)]->start(addresses, 42, on_lost);
      });
    }
    for (auto& t : starters) t.join();
  }
  PeerMonitor& operator[](int r) { return *monitors_[static_cast<size_t>(r)]; }
  Loss loss(int r) {
    std::lock_guard<std::mutex> lock(mutex_);
    return losses_[static_cast<size_t>(r)];
  }
  // Waits up to `limit` for rank r to report a loss.
  Loss wait_loss(int r, std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline && loss(r).rank < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return loss(r);
  }

 private:
  std::vector<std::unique_ptr<PeerMonitor>> monitors_;
  std::mutex mutex_;
  std::vector<Loss> losses_;
};

}  // namespace

namespace {

// The local address ("0100007F" is 127.0.0.1, "00000000" any) of the TCP socket listening on
// `port`, from /proc/net/tcp; empty when none.
std::string listening_address(int port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // header
  char wanted[8];
  std::snprintf(wanted, sizeof(wanted), "%04X", port);
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (state == "0A" && local.substr(local.find(':') + 1) == wanted) {
      return local.substr(0, local.find(':'));
    }
  }
  return "";
}

int port_of(const std::string& address) {
  return std::stoi(address.substr(address.rfind('|') + 1));
}

}  // namespace

TEST_CASE("a job whose ranks are all on this host listens on loopback only", "[core][fault]") {
  auto logger = make_rank_logger(0, 2, "off");
  PeerMonitor local(0, 2, std::chrono::milliseconds(50), std::chrono::seconds(5), logger, true);
  CHECK_THAT(local.address(),
             Catch::EndsWith("|127.0.0.1|" + std::to_string(port_of(local.address()))));
  CHECK(listening_address(port_of(local.address())) == "0100007F");
  PeerMonitor spread(0, 2, std::chrono::milliseconds(50), std::chrono::seconds(5), logger, false);
  CHECK(listening_address(port_of(spread.address())) == "00000000");
  // And such a group still finds and watches its peers.
  MonitorGroup group(3, std::chrono::milliseconds(400), true);
  group[1].freeze_for_test();
  for (int r : {0, 2}) CHECK(group.wait_loss(r, std::chrono::seconds(10)).rank == 1);
}

TEST_CASE("a peer whose connections close without goodbye is lost at once", "[core][fault]") {
  MonitorGroup group(4, std::chrono::seconds(30));
  auto killed_at = std::chrono::steady_clock::now();
  group[2].crash_for_test();
  for (int r : {0, 1, 3}) {
    Loss loss = group.wait_loss(r, std::chrono::seconds(10));
    INFO("rank " << r);
    CHECK(loss.rank == 2);
    CHECK_THAT(loss.why, Catch::Contains("lost rank 2") && Catch::Contains("exited or was killed"));
    CHECK(loss.when - killed_at < std::chrono::seconds(5));  // far below the 30 s timeout
  }
}

TEST_CASE("a peer that stops sending heartbeats is lost after the timeout", "[core][fault]") {
  MonitorGroup group(3, std::chrono::milliseconds(400));
  group[1].freeze_for_test();
  for (int r : {0, 2}) {
    Loss loss = group.wait_loss(r, std::chrono::seconds(10));
    CHECK(loss.rank == 1);
    CHECK_THAT(loss.why, Catch::Contains("stopped answering"));
  }
}

TEST_CASE("a clean stop is not a loss", "[core][fault]") {
  MonitorGroup group(3, std::chrono::milliseconds(300));
  group[0].stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(900));  // three timeouts
  CHECK(group.loss(1).rank == -1);
  CHECK(group.loss(2).rank == -1);
}

TEST_CASE("a lost peer fails every pending and later op with its rank", "[core][fault]") {
  // Rank 1 never enqueues and freezes its monitor (a hung process); rank 0's op fails. (Two
  // ranks: with more, the local backend would also pass on rank 0's abort to the others.)
  std::atomic<bool> done{false};
  runrun::testing::run_ranks(
      2,
      [&](int rank, Runtime& rt) {
        if (rank == 1) {
          rt.freeze_peer_monitor_for_test();
          while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          return;
        }
        struct Release {
          std::atomic<bool>& flag;
          ~Release() { flag = true; }  // rank 1 must not wait forever if a check below fails
        } release{done};
        std::vector<float> x(4, 1.0f);
        TensorView v{x.data(), DataType::kFloat32, {4}};
        auto pending = rt.allreduce("x", v, v, {});
        std::string error = runrun::testing::require_error(*pending, ErrorCode::kPeerFailure);
        RANK_CHECK(error.find("lost rank 1") != std::string::npos);
        try {
          rt.allreduce("later", v, v, {});
          RANK_CHECK(false);
        } catch (const PeerFailureError& e) {
          RANK_CHECK(std::string(e.what()).find("lost rank 1") != std::string::npos);
        }
      },
      {{"RUNRUN_PEER_TIMEOUT", "2"}, {"RUNRUN_SHUTDOWN_TIMEOUT", "2"}});
}
