#include "tests/unit/core/rank_threads.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "ops/local/local_backend.h"

namespace runrun::testing {

void run_ranks(int size, const RankBody& body, const std::map<std::string, std::string>& overrides,
               int ranks_per_host) {
  LocalWorldOptions options;
  options.ranks_per_host = ranks_per_host;
  auto world = std::make_shared<LocalWorld>(size, options);
  std::mutex mutex;
  std::string first_failure;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      std::string failure;
      try {
        Config config = Config::load(overrides);
        Runtime runtime(std::make_unique<LocalBackend>(world, rank), config);
        body(rank, runtime);
        runtime.shutdown();
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "unknown exception";
      }
      if (!failure.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first_failure.empty()) first_failure = "rank " + std::to_string(rank) + ": " + failure;
        world->fail_rank(rank);  // peers waiting on this rank fail instead of hanging
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!first_failure.empty()) FAIL(first_failure);
}

void require_ok(Handle& handle) {
  if (!handle.wait(std::chrono::seconds(60))) throw std::runtime_error("op did not finish in 60 s");
  if (handle.code() != ErrorCode::kOk) throw std::runtime_error("op failed: " + handle.error());
}

std::string require_error(Handle& handle, ErrorCode code) {
  if (!handle.wait(std::chrono::seconds(60))) throw std::runtime_error("op did not finish in 60 s");
  if (handle.code() != code) {
    throw std::runtime_error("expected error code " + std::string(error_code_name(code)) +
                             ", got " + std::string(error_code_name(handle.code())) + ": " +
                             handle.error());
  }
  return handle.error();
}

void wait_for(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("another rank did not get there in 60 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace runrun::testing
