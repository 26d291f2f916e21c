// The allgather, broadcast, reducescatter and barrier algorithms of ops/algorithms over the
// in-process transport: exact results at 1-17 ranks with uneven and empty blocks, every root;
// and, at 64, 256 and 1,024 ranks as threads, the steps, messages and bytes each rank takes
// against the model (docs/scaling.md): ceil(log2 N) steps for Bruck, the tree and
// dissemination, N-1 for the rings, (N-1)/N of the gathered bytes per rank (issue 40).

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ops/algorithms/algorithm_choice.h"
#include "ops/algorithms/allgather.h"
#include "ops/algorithms/barrier.h"
#include "ops/algorithms/block_span.h"
#include "ops/algorithms/broadcast.h"
#include "ops/algorithms/reducescatter.h"
#include "ops/base/block_layout.h"
#include "ops/cpu/reduce_kernels.h"
#include "tests/unit/ops/algorithms/in_process_transport.h"

using runrun::DataType;
using runrun::ReduceOp;
using runrun::algorithms::BlockSpan;
using runrun::testing::InProcessTransport;
using runrun::testing::RankCounts;
using runrun::testing::run_in_process;

namespace {

const std::vector<int> kSmallWorlds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17};

int ceil_log2(int n) {
  int steps = 0;
  while ((1 << steps) < n) ++steps;
  return steps;
}

// Byte i of rank r's block: differs between ranks and positions.
char byte_of(int rank, size_t i) {
  return static_cast<char>((rank * 37 + static_cast<int>(i) * 11 + 5) & 0xff);
}

// Block sizes of a world of `ranks`: uneven, some empty ("shape" picks one of several).
std::vector<size_t> block_bytes(int ranks, int shape) {
  std::vector<size_t> bytes(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<size_t>(r);
    bytes[i] = shape == 0   ? 1
               : shape == 1 ? (i * 7 + 3) % 13
               : shape == 2 ? (i % 3 == 1 ? 0 : 1000 + i)
                            : 0;
  }
  return bytes;
}

using Allgather = void (*)(InProcessTransport&, char*, const std::vector<BlockSpan>&);

void check_allgather(Allgather allgather, int ranks, const std::vector<size_t>& bytes) {
  const auto spans = runrun::algorithms::spans_in_rank_order(bytes);
  const size_t total = std::accumulate(bytes.begin(), bytes.end(), size_t{0});
  std::vector<std::vector<char>> results(static_cast<size_t>(ranks));
  run_in_process(ranks, [&](InProcessTransport& transport) {
    const int me = transport.rank();
    std::vector<char> buffer(total + 1, '\x7f');
    const BlockSpan own = spans[static_cast<size_t>(me)];
    for (size_t i = 0; i < own.bytes; ++i) buffer[own.offset + i] = byte_of(me, i);
    allgather(transport, buffer.data(), spans);
    results[static_cast<size_t>(me)] = buffer;
  });
  for (int r = 0; r < ranks; ++r) {
    for (int p = 0; p < ranks; ++p) {
      const BlockSpan block = spans[static_cast<size_t>(p)];
      for (size_t i = 0; i < block.bytes; ++i) {
        if (results[static_cast<size_t>(r)][block.offset + i] != byte_of(p, i)) {
          FAIL("rank " << r << " of " << ranks << ": byte " << i << " of rank " << p << "'s block");
        }
      }
    }
    CHECK(results[static_cast<size_t>(r)][total] == '\x7f');  // nothing written past the end
  }
}

void bruck(InProcessTransport& transport, char* buffer, const std::vector<BlockSpan>& spans) {
  size_t total = 0;
  for (const auto& span : spans) total += span.bytes;
  std::vector<char> scratch(total + 1);
  runrun::algorithms::allgather_bruck(transport, buffer, spans, scratch.data());
}

void ring(InProcessTransport& transport, char* buffer, const std::vector<BlockSpan>& spans) {
  runrun::algorithms::allgather_ring(transport, buffer, spans);
}

using Broadcast = void (*)(runrun::algorithms::StepTransport&, char*, size_t, int);

void check_broadcast(Broadcast broadcast, int ranks, size_t bytes, int root) {
  std::vector<std::vector<char>> results(static_cast<size_t>(ranks));
  run_in_process(ranks, [&](InProcessTransport& transport) {
    const int me = transport.rank();
    std::vector<char> buffer(bytes + 1, '\x7f');
    for (size_t i = 0; i < bytes; ++i) buffer[i] = me == root ? byte_of(root, i) : '\0';
    broadcast(transport, buffer.data(), bytes, root);
    results[static_cast<size_t>(me)] = buffer;
  });
  for (int r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < bytes; ++i) {
      if (results[static_cast<size_t>(r)][i] != byte_of(root, i)) {
        FAIL("rank " << r << " of " << ranks << ", root " << root << ", " << bytes
                     << " bytes: byte " << i);
      }
    }
    CHECK(results[static_cast<size_t>(r)][bytes] == '\x7f');
  }
}

runrun::algorithms::Reduction int_sum() {
  return {sizeof(int32_t), [](void* into, const void* from, size_t count) {
            runrun::cpu::reduce_into(into, from, count, DataType::kInt32, ReduceOp::kSum);
          }};
}

// Element i of rank r's input (every block of it).
int32_t input_of(int rank, size_t i) {
  return (rank * 29 + static_cast<int32_t>(i % 97)) % 150 - 75;
}

using Reducescatter = void (*)(runrun::algorithms::StepTransport&, char*,
                               const std::vector<size_t>&, const runrun::algorithms::Reduction&,
                               char*);

void check_reducescatter(Reducescatter reducescatter, int ranks,
                         const std::vector<size_t>& counts) {
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  const auto starts = runrun::offsets_of(counts);
  std::vector<std::vector<int32_t>> results(static_cast<size_t>(ranks));
  run_in_process(ranks, [&](InProcessTransport& transport) {
    const int me = transport.rank();
    std::vector<int32_t> work(total + 1);
    for (size_t i = 0; i < total; ++i) work[i] = input_of(me, i);
    std::vector<int32_t> scratch(total + 1);
    reducescatter(transport, reinterpret_cast<char*>(work.data()), counts, int_sum(),
                  reinterpret_cast<char*>(scratch.data()));
    const auto at = starts[static_cast<size_t>(me)];
    results[static_cast<size_t>(me)].assign(
        work.begin() + static_cast<long>(at),
        work.begin() + static_cast<long>(at + counts[static_cast<size_t>(me)]));
  });
  for (int r = 0; r < ranks; ++r) {
    const auto at = starts[static_cast<size_t>(r)];
    for (size_t i = 0; i < counts[static_cast<size_t>(r)]; ++i) {
      int32_t want = 0;
      for (int p = 0; p < ranks; ++p) want += input_of(p, at + i);
      if (results[static_cast<size_t>(r)][i] != want) {
        FAIL("rank " << r << " of " << ranks << ": element " << i << " of its block: got "
                     << results[static_cast<size_t>(r)][i] << ", want " << want);
      }
    }
  }
}

}  // namespace

TEST_CASE(
    "ops/algorithms: Bruck's and the ring allgather deliver every block exactly at 1-17 ranks") {
  for (Allgather allgather : {&bruck, &ring}) {
    for (int ranks : kSmallWorlds) {
      for (int shape : {0, 1, 2, 3}) {
        INFO(ranks << " ranks, block shape " << shape);
        check_allgather(allgather, ranks, block_bytes(ranks, shape));
      }
    }
  }
}

TEST_CASE(
    "ops/algorithms: the binomial tree and scatter-allgather broadcasts reach every rank from "
    "every root") {
  for (Broadcast broadcast : {&runrun::algorithms::broadcast_binomial_tree,
                              &runrun::algorithms::broadcast_scatter_allgather}) {
    for (int ranks : kSmallWorlds) {
      for (int root = 0; root < ranks; ++root) {
        for (size_t bytes : {size_t{0}, size_t{1}, static_cast<size_t>(ranks - 1),
                             static_cast<size_t>(ranks) + 1, size_t{1000}}) {
          INFO(ranks << " ranks, root " << root << ", " << bytes << " bytes");
          check_broadcast(broadcast, ranks, bytes, root);
        }
      }
    }
  }
}

TEST_CASE(
    "ops/algorithms: the ring and recursive-doubling reducescatters give every rank its exact "
    "block") {
  for (Reducescatter reducescatter : {&runrun::algorithms::reducescatter_ring,
                                      &runrun::algorithms::reducescatter_recursive_doubling}) {
    for (int ranks : kSmallWorlds) {
      for (int shape : {0, 1, 2}) {
        INFO(ranks << " ranks, block shape " << shape);
        check_reducescatter(reducescatter, ranks, block_bytes(ranks, shape));
      }
    }
  }
}

TEST_CASE("ops/algorithms: the dissemination barrier lets no rank out before every rank is in") {
  for (int ranks : kSmallWorlds) {
    std::atomic<int> entered{0};
    std::atomic<int> early{0};
    run_in_process(ranks, [&](InProcessTransport& transport) {
      // The last rank enters late: nobody may leave before it has.
      if (transport.rank() == ranks - 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      entered.fetch_add(1);
      runrun::algorithms::barrier_dissemination(transport);
      if (entered.load() != ranks) early.fetch_add(1);
    });
    INFO(ranks << " ranks");
    CHECK(early.load() == 0);
  }
}

TEST_CASE(
    "ops/algorithms: at 64, 256 and 1024 ranks the logarithmic algorithms take ceil(log2 N) "
    "steps") {
  for (int ranks : {64, 256, 1000, 1024}) {
    INFO(ranks << " ranks");
    const int steps = ceil_log2(ranks);
    const auto n = static_cast<size_t>(ranks);
    // Bruck: 16 bytes per rank; every rank sends (N-1) blocks' worth in ceil(log2 N) messages.
    const auto spans = runrun::algorithms::spans_in_rank_order(std::vector<size_t>(n, 16));
    for (const RankCounts& rank : run_in_process(ranks, [&](InProcessTransport& transport) {
           std::vector<char> buffer(16 * n);
           bruck(transport, buffer.data(), spans);
         })) {
      CHECK(rank.steps == steps);
      CHECK(rank.messages == steps);
      CHECK(rank.bytes == 16 * (n - 1));
    }
    // The tree: ceil(log2 N) steps everywhere; N-1 messages in all, the root's ceil(log2 N).
    const auto tree = run_in_process(ranks, [&](InProcessTransport& transport) {
      int32_t value = transport.rank() == 3 ? 42 : 0;
      runrun::algorithms::broadcast_binomial_tree(transport, reinterpret_cast<char*>(&value), 4, 3);
      if (value != 42) throw std::runtime_error("wrong value");
    });
    long messages = 0;
    for (const RankCounts& rank : tree) {
      CHECK(rank.steps == steps);
      messages += rank.messages;
    }
    CHECK(messages == ranks - 1);
    CHECK(tree[3].messages == steps);
    // Dissemination: ceil(log2 N) steps of one byte.
    for (const RankCounts& rank : run_in_process(ranks, [&](InProcessTransport& transport) {
           runrun::algorithms::barrier_dissemination(transport);
         })) {
      CHECK(rank.steps == steps);
      CHECK(rank.messages == steps);
      CHECK(rank.bytes == static_cast<size_t>(steps));
    }
  }
}

TEST_CASE(
    "ops/algorithms: at 64 and 256 ranks the rings send (N-1)/N of the buffer in N-1 steps, a "
    "broadcast's root at most twice it") {
  for (int ranks : {64, 256}) {
    INFO(ranks << " ranks");
    const auto n = static_cast<size_t>(ranks);
    const size_t block = 8;  // bytes (two int32 elements) per rank
    const auto spans = runrun::algorithms::spans_in_rank_order(std::vector<size_t>(n, block));
    for (const RankCounts& rank : run_in_process(ranks, [&](InProcessTransport& transport) {
           std::vector<char> buffer(block * n);
           ring(transport, buffer.data(), spans);
         })) {
      CHECK(rank.steps == ranks - 1);
      CHECK(rank.bytes == block * (n - 1));
    }
    const std::vector<size_t> counts(n, block / 4);
    for (const RankCounts& rank : run_in_process(ranks, [&](InProcessTransport& transport) {
           std::vector<char> work(block * n);
           std::vector<char> received(block);
           runrun::algorithms::reducescatter_ring(transport, work.data(), counts, int_sum(),
                                                  received.data());
         })) {
      CHECK(rank.steps == ranks - 1);
      CHECK(rank.bytes == block * (n - 1));
    }
    // Scatter-allgather: the root sends (N-1)/N down the tree and (N-1)/N... of one block per
    // ring step: about twice the buffer, where the direct exchange sends N-1 copies.
    const size_t bytes = block * n;
    const auto counted = run_in_process(ranks, [&](InProcessTransport& transport) {
      std::vector<char> buffer(bytes);
      runrun::algorithms::broadcast_scatter_allgather(transport, buffer.data(), bytes, 0);
    });
    CHECK(counted[0].bytes == 2 * bytes - 2 * block);
    for (const RankCounts& rank : counted) CHECK(rank.bytes <= 2 * bytes);
  }
}

TEST_CASE("ops/algorithms: auto keeps the direct exchanges up to 4 ranks, then chooses by size") {
  using namespace runrun::algorithms;
  CHECK(choose_allgather(size_t{256} << 20, 4) == AllgatherAlgorithm::kDirect);
  CHECK(choose_allgather(size_t{64} << 10, 5) == AllgatherAlgorithm::kBruck);
  CHECK(choose_allgather((size_t{64} << 10) + 1, 5) == AllgatherAlgorithm::kRing);
  CHECK(choose_broadcast(4, 3) == BroadcastAlgorithm::kDirect);
  CHECK(choose_broadcast(4, 1024) == BroadcastAlgorithm::kBinomialTree);
  CHECK(choose_broadcast(size_t{1} << 20, 8) == BroadcastAlgorithm::kScatterAllgather);
  CHECK(choose_reducescatter(4, 2) == ReducescatterAlgorithm::kDirect);
  CHECK(choose_reducescatter(4, 8) == ReducescatterAlgorithm::kRecursiveDoubling);
  CHECK(choose_reducescatter(size_t{1} << 20, 8) == ReducescatterAlgorithm::kRing);
  CHECK(parse_allgather_algorithm("ring") == AllgatherAlgorithm::kRing);
  CHECK(parse_broadcast_algorithm("scatter_allgather") == BroadcastAlgorithm::kScatterAllgather);
  CHECK(parse_reducescatter_algorithm("") == ReducescatterAlgorithm::kAuto);
  CHECK_THROWS_WITH(parse_broadcast_algorithm("ring"),
                    Catch::Contains("RUNRUN_GLOO_BROADCAST='ring' is not a broadcast algorithm: "
                                    "use auto (the default), direct, binomial_tree or "
                                    "scatter_allgather"));
  CHECK_THROWS_WITH(parse_allgather_algorithm("tree"),
                    Catch::Contains("RUNRUN_GLOO_ALLGATHER='tree'"));
  CHECK_THROWS_WITH(parse_reducescatter_algorithm("halving_doubling"),
                    Catch::Contains("RUNRUN_GLOO_REDUCESCATTER='halving_doubling'"));
}
