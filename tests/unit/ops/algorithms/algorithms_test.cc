// The shared collective algorithms (ops/algorithms) over the in-process transport: exact results
// and the same bits on every rank at 1-17 ranks, every count around the block boundaries; and,
// at 64, 256 and 1,024 ranks as threads, the messages, bytes and steps each rank takes, checked
// against the cost model of docs/scaling.md (issue 40, point 3). The Gloo control channel's
// negotiation rounds beyond 4 ranks are this recursive doubling (ops/gloo/gloo_control_channel).

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ops/algorithms/algorithm_choice.h"
#include "ops/algorithms/halving_doubling.h"
#include "ops/algorithms/recursive_doubling.h"
#include "ops/cpu/reduce_kernels.h"
#include "tests/unit/ops/algorithms/in_process_transport.h"

using runrun::DataType;
using runrun::ReduceOp;
using runrun::algorithms::AllreduceAlgorithm;
using runrun::algorithms::Reduction;
using runrun::algorithms::StepTransport;
using runrun::testing::InProcessTransport;
using runrun::testing::RankCounts;
using runrun::testing::run_in_process;

namespace {

using Allreduce = void (*)(StepTransport&, void*, size_t, const Reduction&, void*);

Reduction reduction_of(DataType type, ReduceOp op, size_t element_size) {
  return {element_size, [type, op](void* into, const void* from, size_t count) {
            runrun::cpu::reduce_into(into, from, count, type, op);
          }};
}

// Element i of rank r: small integers, so sums are exact in any order (as float32 too).
int value_of(int rank, size_t i) { return (rank * 31 + static_cast<int>(i % 89)) % 200 - 100; }

template <typename T>
void check_exact(Allreduce allreduce, DataType type, ReduceOp op, int ranks, size_t count) {
  std::vector<std::vector<T>> results(static_cast<size_t>(ranks));
  run_in_process(ranks, [&](InProcessTransport& transport) {
    std::vector<T> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<T>(value_of(transport.rank(), i));
    std::vector<T> scratch(count + 1);
    allreduce(transport, data.data(), count, reduction_of(type, op, sizeof(T)), scratch.data());
    results[static_cast<size_t>(transport.rank())] = data;
  });
  for (size_t i = 0; i < count; ++i) {
    T want = static_cast<T>(value_of(0, i));
    for (int r = 1; r < ranks; ++r) {
      const T v = static_cast<T>(value_of(r, i));
      want = op == ReduceOp::kSum   ? static_cast<T>(want + v)
             : op == ReduceOp::kMin ? std::min(want, v)
                                    : std::max(want, v);
    }
    for (int r = 0; r < ranks; ++r) {
      if (results[static_cast<size_t>(r)][i] != want) {
        FAIL("rank " << r << " of " << ranks << ", count " << count << ", element " << i << ": got "
                     << results[static_cast<size_t>(r)][i] << ", want " << want);
      }
    }
  }
}

int log2_floor(int n) {
  int steps = 0;
  while ((2 << steps) <= n) ++steps;
  return steps;
}

}  // namespace

TEST_CASE(
    "ops/algorithms: recursive doubling and halving-doubling give exact sums, minima and maxima at "
    "1-17 ranks") {
  for (Allreduce allreduce : {&runrun::algorithms::allreduce_recursive_doubling,
                              &runrun::algorithms::allreduce_halving_doubling}) {
    for (int ranks : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17}) {
      for (size_t count :
           {size_t{0}, size_t{1}, size_t{2}, size_t{3}, static_cast<size_t>(ranks - 1),
            static_cast<size_t>(ranks), static_cast<size_t>(ranks + 1), size_t{37}, size_t{1000}}) {
        INFO(ranks << " ranks, " << count << " elements");
        check_exact<int32_t>(allreduce, DataType::kInt32, ReduceOp::kSum, ranks, count);
        check_exact<float>(allreduce, DataType::kFloat32, ReduceOp::kSum, ranks, count);
        check_exact<int32_t>(allreduce, DataType::kInt32, ReduceOp::kMin, ranks, count);
        check_exact<double>(allreduce, DataType::kFloat64, ReduceOp::kMax, ranks, count);
      }
    }
  }
}

TEST_CASE("ops/algorithms: every rank ends with the same bits where the order of operands shows") {
  // max(+0, -0) and sums of values of very different magnitude depend on the order of operands:
  // partners combine in group order, so every rank holds the same bits.
  for (Allreduce allreduce : {&runrun::algorithms::allreduce_recursive_doubling,
                              &runrun::algorithms::allreduce_halving_doubling}) {
    for (int ranks : {3, 5, 8, 11}) {
      for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kSum}) {
        const size_t count = 64;
        std::vector<std::vector<float>> results(static_cast<size_t>(ranks));
        run_in_process(ranks, [&](InProcessTransport& transport) {
          std::vector<float> data(count);
          for (size_t i = 0; i < count; ++i) {
            const int r = transport.rank();
            data[i] = op == ReduceOp::kSum ? std::ldexp(1.0f + static_cast<float>(i % 7) / 8.0f,
                                                        (r * 13 + static_cast<int>(i)) % 40 - 20)
                                           : ((r + static_cast<int>(i)) % 2 == 0 ? 0.0f : -0.0f);
          }
          std::vector<float> scratch(count);
          allreduce(transport, data.data(), count,
                    reduction_of(DataType::kFloat32, op, sizeof(float)), scratch.data());
          results[static_cast<size_t>(transport.rank())] = data;
        });
        for (int r = 1; r < ranks; ++r) {
          INFO(ranks << " ranks, rank " << r);
          CHECK(std::memcmp(results[0].data(), results[static_cast<size_t>(r)].data(),
                            count * sizeof(float)) == 0);
        }
      }
    }
  }
}

TEST_CASE(
    "ops/algorithms: at 64, 256 and 1024 ranks a 4-byte recursive doubling takes log2 N steps of "
    "one message") {
  for (int ranks : {64, 256, 1000, 1024}) {
    const auto counts = run_in_process(ranks, [&](InProcessTransport& transport) {
      int32_t value = transport.rank();
      int32_t scratch = 0;
      runrun::algorithms::allreduce_recursive_doubling(
          transport, &value, 1, reduction_of(DataType::kInt32, ReduceOp::kSum, 4), &scratch);
      if (value != ranks * (ranks - 1) / 2) throw std::runtime_error("wrong sum");
    });
    const int group_steps = log2_floor(ranks);
    const bool folded = (1 << group_steps) != ranks;
    INFO(ranks << " ranks");
    for (const RankCounts& rank : counts) {
      // Every rank takes the same steps; a negotiation round is the same exchange of words.
      CHECK(rank.steps == group_steps + (folded ? 2 : 0));
      CHECK(rank.messages <= group_steps + 1);
      CHECK(rank.bytes == static_cast<size_t>(rank.messages) * 4);
    }
    if (!folded) CHECK(counts[0].messages == group_steps);  // ceil(log2 N): the model
  }
}

TEST_CASE(
    "ops/algorithms: at 64, 256 and 1024 ranks halving-doubling sends 2 (N-1)/N of the buffer in 2 "
    "log2 N steps") {
  for (int ranks : {64, 256, 1024}) {
    const size_t count = static_cast<size_t>(ranks) * 4;  // 16 bytes per block
    const auto counts = run_in_process(ranks, [&](InProcessTransport& transport) {
      std::vector<int32_t> data(count, transport.rank() % 3);
      std::vector<int32_t> scratch(count);
      runrun::algorithms::allreduce_halving_doubling(
          transport, data.data(), count, reduction_of(DataType::kInt32, ReduceOp::kSum, 4),
          scratch.data());
      int32_t want = 0;
      for (int r = 0; r < ranks; ++r) want += r % 3;
      for (int32_t v : data) {
        if (v != want) throw std::runtime_error("wrong sum");
      }
    });
    const int steps = log2_floor(ranks);
    INFO(ranks << " ranks");
    for (const RankCounts& rank : counts) {
      CHECK(rank.steps == 2 * steps);
      CHECK(rank.messages == 2 * steps);
      CHECK(rank.bytes ==
            2 * (count * 4) * static_cast<size_t>(ranks - 1) / static_cast<size_t>(ranks));
    }
  }
}

TEST_CASE("ops/algorithms: auto picks the direct exchange up to 4 ranks, then by size") {
  using runrun::algorithms::choose_allreduce;
  CHECK(choose_allreduce(4, 2) == AllreduceAlgorithm::kDirect);
  CHECK(choose_allreduce(size_t{256} << 20, 4) == AllreduceAlgorithm::kDirect);
  CHECK(choose_allreduce(4, 5) == AllreduceAlgorithm::kRecursiveDoubling);
  CHECK(choose_allreduce(size_t{64} << 10, 1024) == AllreduceAlgorithm::kRecursiveDoubling);
  CHECK(choose_allreduce((size_t{64} << 10) + 1, 8) == AllreduceAlgorithm::kHalvingDoubling);
  using runrun::algorithms::parse_allreduce_algorithm;
  CHECK(parse_allreduce_algorithm(nullptr) == AllreduceAlgorithm::kAuto);
  CHECK(parse_allreduce_algorithm("") == AllreduceAlgorithm::kAuto);
  CHECK(parse_allreduce_algorithm("halving_doubling") == AllreduceAlgorithm::kHalvingDoubling);
  CHECK(parse_allreduce_algorithm("recursive_doubling") == AllreduceAlgorithm::kRecursiveDoubling);
  CHECK(parse_allreduce_algorithm("direct") == AllreduceAlgorithm::kDirect);
  CHECK_THROWS_WITH(parse_allreduce_algorithm("ring"),
                    Catch::Contains("RUNRUN_GLOO_ALLREDUCE='ring' is not an allreduce algorithm"));
}
