#pragma once
// Why: runs the collective algorithms of ops/algorithms at hundreds to thousands of ranks inside
// one test process (each rank a thread, each message a copy through the receiver's mailbox) and
// counts what every rank sends (messages, bytes) and how many steps it takes, so their costs
// are checked against the model (docs/scaling.md) far beyond the ranks this machine can start
// as processes (issue 40, point 3).
// Threading contract: one thread per rank drives its InProcessTransport; the world's mailboxes
// are shared and locked. A receive that waits over 60 s throws (a test fails, never hangs).

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ops/algorithms/step_transport.h"

namespace runrun::testing {

class InProcessWorld {
 public:
  explicit InProcessWorld(int size) : mailboxes_(static_cast<size_t>(size)) {}
  int size() const { return static_cast<int>(mailboxes_.size()); }

  void deliver(int to, int from, long step, const void* data, size_t bytes) {
    Mailbox& box = mailboxes_[static_cast<size_t>(to)];
    std::vector<char> message(static_cast<const char*>(data),
                              static_cast<const char*>(data) + bytes);
    {
      std::lock_guard<std::mutex> lock(box.mutex);
      box.messages[{from, step}] = std::move(message);
    }
    box.arrived.notify_all();
  }

  void take(int to, int from, long step, void* data, size_t bytes) {
    Mailbox& box = mailboxes_[static_cast<size_t>(to)];
    std::unique_lock<std::mutex> lock(box.mutex);
    const auto key = std::make_pair(from, step);
    if (!box.arrived.wait_for(lock, std::chrono::seconds(60),
                              [&] { return box.messages.count(key) > 0; })) {
      throw std::runtime_error("rank " + std::to_string(to) + " waited 60 s for step " +
                               std::to_string(step) + "'s message from rank " +
                               std::to_string(from));
    }
    const std::vector<char> message = std::move(box.messages[key]);
    box.messages.erase(key);
    lock.unlock();
    if (message.size() != bytes) {
      throw std::runtime_error("rank " + std::to_string(to) + " expected " + std::to_string(bytes) +
                               " bytes from rank " + std::to_string(from) + " in step " +
                               std::to_string(step) + ", got " + std::to_string(message.size()));
    }
    std::memcpy(data, message.data(), bytes);
  }

 private:
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<std::pair<int, long>, std::vector<char>> messages;  // (sender, step) -> bytes
  };
  std::vector<Mailbox> mailboxes_;
};

class InProcessTransport final : public algorithms::StepTransport {
 public:
  InProcessTransport(InProcessWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }

  void step(const std::vector<algorithms::StepTransfer>& sends,
            const std::vector<algorithms::StepTransfer>& receives) override {
    for (const auto& send : sends) {
      check_peer(send.peer);
      if (send.bytes == 0) continue;
      world_.deliver(send.peer, rank_, steps_, send.data, send.bytes);
      ++messages_;
      bytes_ += send.bytes;
    }
    for (const auto& receive : receives) {
      check_peer(receive.peer);
      if (receive.bytes > 0) world_.take(rank_, receive.peer, steps_, receive.data, receive.bytes);
    }
    ++steps_;
  }

  long messages() const { return messages_; }
  size_t bytes() const { return bytes_; }
  long steps() const { return steps_; }

 private:
  void check_peer(int peer) const {
    if (peer < 0 || peer >= size() || peer == rank_) {
      throw std::runtime_error("rank " + std::to_string(rank_) + " addressed peer " +
                               std::to_string(peer));
    }
  }

  InProcessWorld& world_;
  int rank_;
  long messages_ = 0;
  size_t bytes_ = 0;
  long steps_ = 0;
};

// What one rank moved in a run.
struct RankCounts {
  long messages;
  size_t bytes;
  long steps;
};

// Runs `body` once per rank of a world of `size`, each on its own thread; returns every rank's
// counts and rethrows the first rank's exception, after joining all.
inline std::vector<RankCounts> run_in_process(
    int size, const std::function<void(InProcessTransport&)>& body) {
  InProcessWorld world(size);
  std::vector<InProcessTransport> transports;
  transports.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) transports.emplace_back(world, rank);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        body(transports[static_cast<size_t>(rank)]);
      } catch (...) {
        errors[static_cast<size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  std::vector<RankCounts> counts;
  for (const auto& transport : transports) {
    counts.push_back({transport.messages(), transport.bytes(), transport.steps()});
  }
  return counts;
}

}  // namespace runrun::testing
