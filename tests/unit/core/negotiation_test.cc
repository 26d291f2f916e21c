// Negotiation: different enqueue orders, the response cache's fast path and its invalidation,
// fusion of small tensors.
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "core/execution/fusion_planner.h"
#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_error;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;
using runrun::testing::view_of;

namespace {

AllreduceOptions sum() {
  AllreduceOptions o;
  o.op = ReduceOp::kSum;
  return o;
}

}  // namespace

TEST_CASE("many tensors enqueued in different orders on different ranks all complete", "[core]") {
  for (int size : {2, 4}) {
    run_ranks(size, [size](int rank, Runtime& rt) {
      const int count = 64;
      std::vector<int> order(count);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(rank) + 7));
      std::vector<std::vector<float>> tensors(count);
      std::vector<std::shared_ptr<Handle>> handles(count);
      for (int i : order) {
        tensors[static_cast<size_t>(i)].assign(static_cast<size_t>(i + 1),
                                               static_cast<float>(rank + i));
        handles[static_cast<size_t>(i)] =
            rt.allreduce("grad." + std::to_string(i), view_of(tensors[static_cast<size_t>(i)]),
                         view_of(tensors[static_cast<size_t>(i)]), sum());
      }
      for (int i = 0; i < count; ++i) {
        require_ok(*handles[static_cast<size_t>(i)]);
        float expected = static_cast<float>(size * i + size * (size - 1) / 2);
        for (float v : tensors[static_cast<size_t>(i)]) RANK_CHECK(v == expected);
      }
    });
  }
}

TEST_CASE("steady state takes the cache fast path without coordinator rounds", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    const int count = 10;
    std::vector<std::vector<float>> tensors(count, std::vector<float>(16));
    auto step = [&] {
      std::vector<std::shared_ptr<Handle>> handles;
      for (int i = 0; i < count; ++i) {
        std::fill(tensors[static_cast<size_t>(i)].begin(), tensors[static_cast<size_t>(i)].end(),
                  static_cast<float>(rank + 1));
        handles.push_back(rt.allreduce("w" + std::to_string(i),
                                       view_of(tensors[static_cast<size_t>(i)]),
                                       view_of(tensors[static_cast<size_t>(i)]), sum()));
      }
      for (auto& h : handles) require_ok(*h);
      for (auto& t : tensors)
        for (float v : t) RANK_CHECK(v == 3.0f);
    };
    step();
    size_t rounds_after_first = rt.worker(0).coordinator_rounds();
    for (int s = 0; s < 5; ++s) step();
    RANK_CHECK(rt.worker(0).coordinator_rounds() == rounds_after_first);
    RANK_CHECK(rt.worker(0).cache_hits() == 5 * count);
  });
}

TEST_CASE("a changed shape invalidates the cached response on every rank", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    for (size_t n : {8u, 8u, 12u, 12u, 4u}) {
      std::vector<float> x(n, static_cast<float>(rank + 1));
      require_ok(*rt.allreduce("x", view_of(x), view_of(x), sum()));
      for (float v : x) RANK_CHECK(v == 3.0f);
    }
    RANK_CHECK(rt.worker(0).cache_hits() == 2);
  });
}

TEST_CASE("a shape change on one rank only is a mismatch, and the runtime goes on", "[core]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<float> x(8, 1.0f);
    require_ok(*rt.allreduce("x", view_of(x), view_of(x), sum()));  // cached now
    std::vector<float> y(rank == 0 ? 8 : 9, 1.0f);
    std::string error =
        require_error(*rt.allreduce("x", view_of(y), view_of(y), sum()), ErrorCode::kMismatch);
    RANK_CHECK(error.find("'x'") != std::string::npos);
    RANK_CHECK(error.find("rank 0: [8]") != std::string::npos);
    RANK_CHECK(error.find("rank 1: [9]") != std::string::npos);
    std::vector<float> z(8, 1.0f);
    require_ok(*rt.allreduce("x", view_of(z), view_of(z), sum()));
    RANK_CHECK(z[0] == 2.0f);
  });
}

TEST_CASE("small tensors ready together are fused into one collective", "[core]") {
  std::atomic<bool> rank0_enqueued{false};
  run_ranks(2, [&](int rank, Runtime& rt) {
    // Rank 1 starts once rank 0's tensors are all pending, so that negotiation agrees on several
    // at once. (A sleep on rank 1 was not enough: a slow rank 0 had its tensors agreed one by one.)
    if (rank == 1) runrun::testing::wait_for(rank0_enqueued);
    std::vector<std::vector<float>> tensors(20,
                                            std::vector<float>(100, static_cast<float>(rank + 1)));
    std::vector<std::shared_ptr<Handle>> handles;
    for (size_t i = 0; i < tensors.size(); ++i) {
      handles.push_back(
          rt.allreduce("f" + std::to_string(i), view_of(tensors[i]), view_of(tensors[i]), sum()));
    }
    if (rank == 0) rank0_enqueued = true;
    for (auto& h : handles) require_ok(*h);
    for (auto& t : tensors)
      for (float v : t) RANK_CHECK(v == 3.0f);
    RANK_CHECK(rt.worker(0).fused_collectives() >= 1);
  });
}

TEST_CASE("fusion disabled by a zero threshold still gives exact results", "[core]") {
  run_ranks(2,
            [](int rank, Runtime& rt) {
              std::vector<std::vector<float>> tensors(
                  10, std::vector<float>(33, static_cast<float>(rank + 1)));
              std::vector<std::shared_ptr<Handle>> handles;
              for (size_t i = 0; i < tensors.size(); ++i) {
                handles.push_back(rt.allreduce("g" + std::to_string(i), view_of(tensors[i]),
                                               view_of(tensors[i]), sum()));
              }
              for (auto& h : handles) require_ok(*h);
              for (auto& t : tensors)
                for (float v : t) RANK_CHECK(v == 3.0f);
              RANK_CHECK(rt.worker(0).fused_collectives() == 0);
            },
            {{"RUNRUN_FUSION_THRESHOLD", "0"}});
}

TEST_CASE("the fusion planner groups compatible allreduces up to the threshold", "[core]") {
  auto allreduce = [](const char* name, DataType t, int64_t n, ReduceOp op = ReduceOp::kSum) {
    Response r;
    r.name = name;
    r.op = OpType::kAllreduce;
    r.dtype = t;
    r.shape = {n};
    r.reduce_op = op;
    return r;
  };
  std::vector<Response> responses = {allreduce("a", DataType::kFloat32, 10),
                                     allreduce("b", DataType::kFloat64, 10),
                                     allreduce("c", DataType::kFloat32, 10),
                                     allreduce("big", DataType::kFloat32, 1000),
                                     allreduce("d", DataType::kFloat32, 10, ReduceOp::kMax),
                                     allreduce("e", DataType::kFloat32, 10)};
  Response gather;
  gather.name = "g";
  gather.op = OpType::kAllgather;
  responses.push_back(gather);

  auto buckets = plan_fusion(responses, 100);
  // a+c+e fuse (float32 sum, 120 bytes > 100: a+c = 80, e starts a new bucket), b alone, big
  // alone, d alone, g alone.
  REQUIRE(buckets.size() == 6);
  CHECK(buckets[0].members == std::vector<size_t>{0, 2});
  CHECK(buckets[1].members == std::vector<size_t>{1});
  CHECK(buckets[2].members == std::vector<size_t>{3});
  CHECK(buckets[3].members == std::vector<size_t>{4});
  CHECK(buckets[4].members == std::vector<size_t>{5});
  CHECK(buckets[5].members == std::vector<size_t>{6});

  auto unfused = plan_fusion(responses, 0);
  CHECK(unfused.size() == responses.size());
}

TEST_CASE("the fusion planner splits runs of neighbours on every field of its key", "[core]") {
  // Consecutive members take a shortcut (compared with the last bucket, no key built): each
  // field that differs from the neighbour before must still start or find another bucket.
  auto allreduce = [](const char* name) {
    Response r;
    r.name = name;
    r.op = OpType::kAllreduce;
    r.dtype = DataType::kFloat32;
    r.shape = {4};
    r.reduce_op = ReduceOp::kSum;
    return r;
  };
  std::vector<Response> responses;
  for (const char* name : {"a0", "a1", "a2"}) responses.push_back(allreduce(name));
  Response pre = allreduce("pre");
  pre.prescale = 2.0;
  Response post = allreduce("post");
  post.postscale = 0.5;
  Response joined = allreduce("joined");
  joined.joined_ranks = {1};
  Response device = allreduce("device");
  device.device = DLDevice{kDLCUDA, 0};
  Response other_id = allreduce("other_id");
  other_id.device = DLDevice{kDLCPU, 1};
  Response op = allreduce("op");
  op.reduce_op = ReduceOp::kMin;
  Response type = allreduce("type");
  type.dtype = DataType::kInt32;
  for (const Response& r : {pre, post, joined, device, other_id, op, type}) responses.push_back(r);
  responses.push_back(allreduce("a3"));  // back to the first key: its open bucket
  responses.push_back(allreduce("a4"));  // the shortcut again, from a3's bucket

  auto buckets = plan_fusion(responses, 1 << 20);
  REQUIRE(buckets.size() == 8);
  CHECK(buckets[0].members == std::vector<size_t>{0, 1, 2, 10, 11});
  CHECK(buckets[0].bytes == 5 * 16);
  for (size_t b = 1; b < 8; ++b) CHECK(buckets[b].members == std::vector<size_t>{b + 2});

  // Two members per bucket: a2 opens the key's second bucket, a3 joins it there, a4 finds it
  // full (shortcut and map alike) and opens a third.
  auto small = plan_fusion(responses, 32);
  REQUIRE(small.size() == 10);
  CHECK(small[0].members == std::vector<size_t>{0, 1});
  CHECK(small[1].members == std::vector<size_t>{2, 10});
  CHECK(small[9].members == std::vector<size_t>{11});
}
