// DirectMailbox (ops/gloo/gloo_direct_mailbox.h): receives posted an exchange ahead. Exact
// bytes from every peer at 2-4 thread-ranks over 127.0.0.1, with sizes below, at and above the
// posted capacity and exchanges of the mesh's other slot sequence in between; how often the
// receives were found posted or abandoned; a peer that leaves between two exchanges and an
// abort while waiting end in the right error.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "common/errors.h"
#include "ops/gloo/gloo_direct_mailbox.h"
#include "ops/gloo/gloo_exchange.h"
#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"
#include "tests/unit/ops/rank_errors.h"

using runrun::gloo_backend::DirectMailbox;
using runrun::gloo_backend::Guard;
using runrun::gloo_backend::Mesh;
using runrun::testing::is;
using runrun::testing::message_of;
using namespace std::chrono_literals;

namespace {

// One thread per rank, each with its own mesh and guard over one in-memory store; returns
// every rank's exception (nullptr where it succeeded).
std::vector<std::exception_ptr> run_mesh_ranks(int size, std::chrono::milliseconds timeout,
                                               const std::function<void(Mesh&, Guard&)>& body) {
  auto store = std::make_shared<::gloo::rendezvous::HashStore>();
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto device = runrun::gloo_backend::make_tcp_device("127.0.0.1", "");
        Mesh mesh(*store, "mailbox", rank, size, device, 30s);
        Guard guard(rank, timeout);
        guard.watch(&mesh);
        body(mesh, guard);
      } catch (...) {
        errors[static_cast<size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// Byte i of `rank`'s buffer in exchange `round`: every rank, round and position differ.
char pattern(int rank, int round, size_t i) {
  return static_cast<char>(rank * 31 + round * 7 + static_cast<int>(i % 251));
}

}  // namespace

TEST_CASE(
    "gloo direct mailbox: every peer's bytes, exactly, across capacities and interleaved "
    "exchanges") {
  // Capacity 64 at first: 8 and 64 fit, 65 doubles it to 128, 1000 takes 1000, 3 and 1000
  // fit again.
  const std::vector<size_t> sizes{8, 64, 8, 65, 100, 1000, 3, 1000, 1};
  for (int size : {2, 3, 4}) {
    INFO("ranks " << size);
    const auto errors = run_mesh_ranks(size, 60s, [&](Mesh& mesh, Guard& guard) {
      DirectMailbox mailbox(mesh, 64);
      for (size_t round = 0; round < sizes.size(); ++round) {
        const size_t bytes = sizes[round];
        std::vector<char> mine(bytes);
        for (size_t i = 0; i < bytes; ++i)
          mine[i] = pattern(mesh.rank(), static_cast<int>(round), i);
        std::vector<int> seen;
        size_t wrong = 0;
        mailbox.exchange(guard, "test", guard.deadline(), mine.data(), bytes,
                         [&](int peer, const void* got) {
                           seen.push_back(peer);
                           const auto* data = static_cast<const char*>(got);
                           for (size_t i = 0; i < bytes; ++i) {
                             wrong += data[i] != pattern(peer, static_cast<int>(round), i);
                           }
                         });
        CHECK(wrong == 0);
        std::vector<int> others;
        for (int p = 0; p < mesh.size(); ++p) {
          if (p != mesh.rank()) others.push_back(p);
        }
        CHECK(seen == others);  // each peer once, in rank order
        // An exchange of the other slot sequence between two mailbox exchanges.
        int from_left = -1;
        const int right = (mesh.rank() + 1) % mesh.size();
        const int left = (mesh.rank() + mesh.size() - 1) % mesh.size();
        int rank = mesh.rank();
        runrun::gloo_backend::exchange(mesh, guard, "ring", guard.deadline(),
                                       {{right, &rank, sizeof(rank)}},
                                       {{left, &from_left, sizeof(from_left)}});
        CHECK(from_left == left);
      }
      // Posted ahead: every exchange but the first and the two that outgrew the capacity.
      CHECK(mailbox.exchanges_preposted() == sizes.size() - 3);
      CHECK(mailbox.posts_abandoned() == 2);
    });
    runrun::testing::rethrow_root_cause(errors);
  }
}

TEST_CASE("gloo direct mailbox: a peer gone after an exchange fails the next one, naming it") {
  std::atomic<bool> left{false};
  const auto start = std::chrono::steady_clock::now();
  const auto errors = run_mesh_ranks(3, 60s, [&](Mesh& mesh, Guard& guard) {
    DirectMailbox mailbox(mesh, 64);
    uint64_t word = 1;
    mailbox.exchange(guard, "first", guard.deadline(), &word, sizeof(word),
                     [](int, const void*) {});
    if (mesh.rank() == 2) {
      mesh.close();  // leaves, with the receives of the next exchange posted
      left = true;
      return;
    }
    while (!left.load()) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);  // usually seen by the device thread by now
    mailbox.exchange(guard, "second", guard.deadline(), &word, sizeof(word),
                     [](int, const void*) {});
  });
  CHECK(std::chrono::steady_clock::now() - start < 30s);
  CHECK(errors[2] == nullptr);
  for (int r : {0, 1}) {
    INFO("rank " << r);
    REQUIRE(errors[static_cast<size_t>(r)]);
    const std::string text = message_of(errors[static_cast<size_t>(r)]);
    INFO(text);
    // Rank 0 and 1 both see rank 2 leave; one of them may see the other give up first.
    CHECK(is<runrun::PeerFailureError>(errors[static_cast<size_t>(r)]));
    CHECK_THAT(text, Catch::Contains("second on rank " + std::to_string(r)) &&
                         Catch::Contains("lost rank"));
  }
  CHECK_THAT(message_of(errors[0]) + message_of(errors[1]), Catch::Contains("lost rank 2"));
}

TEST_CASE("gloo direct mailbox: abort ends a wait on a posted receive with ShutDownError") {
  std::atomic<Guard*> rank0{nullptr};
  std::atomic<bool> rank0_done{false};
  std::thread aborter([&] {
    while (rank0.load() == nullptr) std::this_thread::yield();
    std::this_thread::sleep_for(100ms);  // usually waiting by now
    rank0.load()->abort();
  });
  const auto start = std::chrono::steady_clock::now();
  const auto errors = run_mesh_ranks(2, 120s, [&](Mesh& mesh, Guard& guard) {
    DirectMailbox mailbox(mesh, 64);
    uint64_t word = 1;
    mailbox.exchange(guard, "first", guard.deadline(), &word, sizeof(word),
                     [](int, const void*) {});
    if (mesh.rank() == 1) {  // never sends the second exchange; stays until rank 0 is done
      while (!rank0_done.load()) std::this_thread::sleep_for(1ms);
      return;
    }
    rank0 = &guard;
    try {
      mailbox.exchange(guard, "second", guard.deadline(), &word, sizeof(word),
                       [](int, const void*) {});
    } catch (...) {
      rank0_done = true;
      throw;
    }
    rank0_done = true;
  });
  aborter.join();
  CHECK(std::chrono::steady_clock::now() - start < 60s);
  REQUIRE(errors[0]);
  CHECK(is<runrun::ShutDownError>(errors[0]));
  CHECK_THAT(message_of(errors[0]), Catch::Contains("second on rank 0"));
  CHECK(errors[1] == nullptr);
}
