// The backend conformance suite over GlooBackend with 1, 2 and 4 ranks (threads of this
// process, tcp over 127.0.0.1, one in-memory rendezvous store), plus topology from host ids.

#include <catch2/catch.hpp>

#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>

#include "tests/support/backend_conformance.h"
#include "tests/unit/ops/gloo_ranks.h"

using runrun::Backend;
using runrun::testing::run_gloo_ranks;

TEST_CASE("gloo backend passes the conformance suite with 1 rank") {
  run_gloo_ranks(1, [](Backend& backend) { runrun::conformance::run_all(backend); });
}

TEST_CASE("gloo backend passes the conformance suite with 2 ranks") {
  run_gloo_ranks(2, [](Backend& backend) { runrun::conformance::run_all(backend); });
}

TEST_CASE("gloo backend passes the conformance suite with 4 ranks") {
  run_gloo_ranks(4, [](Backend& backend) { runrun::conformance::run_all(backend); });
}

TEST_CASE("gloo topology: host ids give local and cross ranks, subgroups keep them") {
  auto options = runrun::testing::gloo_test_options();
  std::vector<runrun::Topology> topologies(4);
  std::vector<runrun::Topology> sub_topologies(3);
  // Pretend hosts: ranks {0, 1} on host a, {2, 3} on host b.
  auto store = std::make_shared<::gloo::rendezvous::HashStore>();
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> failures(4);
  for (int rank = 0; rank < 4; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto mine = options;
        mine.host_id = rank < 2 ? "a" : "b";
        auto backend = runrun::gloo_backend::make_gloo_backend(store, rank, 4, mine);
        topologies[static_cast<size_t>(rank)] = backend->topology();
        auto sub = backend->create_subgroup({1, 2, 3});
        if (sub) sub_topologies[static_cast<size_t>(sub->rank())] = sub->topology();
        backend->barrier();
      } catch (...) {
        failures[static_cast<size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    const auto& t = topologies[static_cast<size_t>(r)];
    CHECK(t.rank == r);
    CHECK(t.size == 4);
    CHECK(t.local_rank == r % 2);
    CHECK(t.local_size == 2);
    CHECK(t.cross_rank == r / 2);
    CHECK(t.cross_size == 2);
  }
  // Subgroup {1, 2, 3}: rank 1 alone on host a, ranks 2 and 3 on host b.
  const int expected_local[] = {0, 0, 1};
  const int expected_local_size[] = {1, 2, 2};
  const int expected_cross[] = {0, 1, 0};
  const int expected_cross_size[] = {2, 2, 1};
  for (size_t r = 0; r < 3; ++r) {
    INFO("subgroup rank " << r);
    CHECK(sub_topologies[r].rank == static_cast<int>(r));
    CHECK(sub_topologies[r].size == 3);
    CHECK(sub_topologies[r].local_rank == expected_local[r]);
    CHECK(sub_topologies[r].local_size == expected_local_size[r]);
    CHECK(sub_topologies[r].cross_rank == expected_cross[r]);
    CHECK(sub_topologies[r].cross_size == expected_cross_size[r]);
  }
}

TEST_CASE("gloo backend over shared memory with small slots: every collective in many pieces") {
  // 64 KiB per rank per step: the suite's larger buffers (65539 elements, and 4 MiB) move in
  // many pieces (two steps each for allreduce), exercising the pipelined paths of ops/shm.
  // (ops.shm.* covers 4 KiB slots on smaller buffers.)
  auto options = runrun::testing::gloo_test_options();
  options.shared_memory = true;  // also under RUNRUN_GLOO_SHM=0 (ops.gloo.tcp.all)
  options.shared_memory_slot_bytes = size_t{64} << 10;
  const auto errors = runrun::testing::run_gloo_ranks_collect(
      3, options, [](Backend& backend) { runrun::conformance::run_all(backend); });
  runrun::testing::rethrow_root_cause(errors);
}

TEST_CASE("gloo backend: ranks of one host use shared memory unless it is turned off") {
  for (const bool shared_memory : {true, false}) {
    INFO("shared_memory " << shared_memory);
    auto stream = std::make_shared<std::ostringstream>();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*stream);
    auto logger = std::make_shared<spdlog::logger>("shm-selection", sink);
    logger->set_level(spdlog::level::debug);
    auto options = runrun::testing::gloo_test_options();
    options.shared_memory = shared_memory;
    options.logger = logger;
    const auto errors = runrun::testing::run_gloo_ranks_collect(2, options, [](Backend& backend) {
      auto channel = backend.create_control_channel();
      std::vector<uint64_t> bits{backend.rank() == 0 ? 0b110u : 0b011u};
      channel->allreduce_and(bits);
      CHECK(bits[0] == 0b010u);
    });
    runrun::testing::rethrow_root_cause(errors);
    logger->flush();
    const std::string log = stream->str();
    CHECK((log.find("'runrun/gloo/shm' over shared memory") != std::string::npos) == shared_memory);
    CHECK((log.find("'runrun/gloo/control/shm' over shared memory") != std::string::npos) ==
          shared_memory);
  }
}

TEST_CASE(
    "gloo control channel: negotiation agreements and broadcasts at every size over direct and "
    "tree exchanges") {
  // Up to 4 ranks one direct exchange; beyond, recursive doubling, with ranks folded in and out
  // when the size is not a power of two (5, 6, 7, 9). Each rank clears its own bit and one bit
  // that only it knows: the AND keeps exactly the bits no rank cleared.
  for (int size : {2, 3, 4, 5, 6, 7, 8, 9}) {
    INFO("ranks " << size);
    auto options = runrun::testing::gloo_test_options();
    const auto errors =
        runrun::testing::run_gloo_ranks_collect(size, options, [](Backend& backend) {
          auto channel = backend.create_control_channel();
          const int rank = backend.rank();
          for (int round = 0; round < 3; ++round) {
            std::vector<uint64_t> bits{~uint64_t{0}, ~uint64_t{0}};
            bits[0] &= ~(uint64_t{1} << rank);
            bits[1] &= ~(uint64_t{1} << (rank + round + 20));
            channel->allreduce_and(bits);
            uint64_t expect0 = ~uint64_t{0}, expect1 = ~uint64_t{0};
            for (int r = 0; r < backend.size(); ++r) {
              expect0 &= ~(uint64_t{1} << r);
              expect1 &= ~(uint64_t{1} << (r + round + 20));
            }
            CHECK(bits[0] == expect0);
            CHECK(bits[1] == expect1);
          }
          // Broadcasts from every root: a tree beyond 4 ranks, lengths differing by root.
          for (int root = 0; root < backend.size(); ++root) {
            std::string text = rank == root
                                   ? std::string(static_cast<size_t>(root) * 37 + 1, 'a' + root)
                                   : std::string("stale");
            channel->broadcast(text, root);
            CHECK(text == std::string(static_cast<size_t>(root) * 37 + 1, 'a' + root));
          }
          // create_subgroup agrees through the element-wise minimum over the same path.
          std::vector<int> evens;
          for (int r = 0; r < backend.size(); r += 2) evens.push_back(r);
          auto sub = channel->create_subgroup(evens);
          CHECK((sub != nullptr) == (rank % 2 == 0));
          // Members use the subgroup before anyone tears it down (a member closing its connections
          // while another still connects would fail that one's connect), then every rank agrees
          // once more on the parent, so no rank leaves while another is still in the subgroup.
          if (sub) {
            std::vector<uint64_t> member_bits{~uint64_t{0} ^ (uint64_t{1} << rank)};
            sub->allreduce_and(member_bits);
            uint64_t expect = ~uint64_t{0};
            for (int r : evens) expect ^= uint64_t{1} << r;
            CHECK(member_bits[0] == expect);
          }
          std::vector<uint64_t> done{1};
          channel->allreduce_and(done);
          CHECK(done[0] == 1);
        });
    runrun::testing::rethrow_root_cause(errors);
  }
}
