// Error cases: immediate errors (nothing enqueued) and mismatches that fail an op on every
// rank with a message naming the tensor, the op and each rank's value; shutdown.
#include <catch2/catch.hpp>

#include <limits>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <sstream>

#include <spdlog/sinks/ostream_sink.h>

#include "core/api/enqueue_checks.h"
#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_error;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;
using runrun::testing::view_of;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

template <typename Body>
std::string thrown(ErrorCode code, Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    RANK_CHECK(e.code() == code);
    return e.what();
  }
  throw std::runtime_error("expected an error, nothing was thrown");
}

}  // namespace

TEST_CASE("mismatched dtype, op, reduce op, root and scale fail on every rank", "[core][errors]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<float> f(4, 1.0f);
    std::vector<double> d(4, 1.0);
    TensorView dview{d.data(), DataType::kFloat64, {4}};

    auto h1 = rank == 0 ? rt.allreduce("dt", view_of(f), view_of(f), {})
                        : rt.allreduce("dt", dview, dview, {});
    std::string e1 = require_error(*h1, ErrorCode::kMismatch);
    RANK_CHECK(contains(e1, "mismatched dtype for allreduce of tensor 'dt'"));
    RANK_CHECK(contains(e1, "rank 0: float32") && contains(e1, "rank 1: float64"));

    auto h2 = rank == 0 ? rt.allreduce("op", view_of(f), view_of(f), {})
                        : rt.broadcast("op", view_of(f), view_of(f), 0, 0);
    std::string e2 = require_error(*h2, ErrorCode::kMismatch);
    RANK_CHECK(contains(e2, "mismatched op") && contains(e2, "rank 1: broadcast"));

    AllreduceOptions o;
    o.op = rank == 0 ? ReduceOp::kSum : ReduceOp::kMax;
    std::string e3 =
        require_error(*rt.allreduce("rop", view_of(f), view_of(f), o), ErrorCode::kMismatch);
    RANK_CHECK(contains(e3, "reduce op") && contains(e3, "rank 0: sum") &&
               contains(e3, "rank 1: max"));

    std::string e4 =
        require_error(*rt.broadcast("root", view_of(f), view_of(f), rank, 0), ErrorCode::kMismatch);
    RANK_CHECK(contains(e4, "root rank") && contains(e4, "rank 1: 1"));

    AllreduceOptions s;
    s.prescale = rank == 0 ? 1.0 : 2.0;
    std::string e5 =
        require_error(*rt.allreduce("scale", view_of(f), view_of(f), s), ErrorCode::kMismatch);
    RANK_CHECK(contains(e5, "prescale factor"));

    // The runtime goes on serving other tensors.
    std::vector<float> ok(4, 1.0f);
    AllreduceOptions sum;
    sum.op = ReduceOp::kSum;
    require_ok(*rt.allreduce("after", view_of(ok), view_of(ok), sum));
    RANK_CHECK(ok[0] == 2.0f);
  });
}

TEST_CASE("invalid arguments fail at once and enqueue nothing", "[core][errors]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<float> f(4, 1.0f);
    std::vector<float> other(5, 1.0f);
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                               [&] { rt.broadcast("r", view_of(f), view_of(f), 2, 0); }),
                        "root rank 2 is outside the process set"));
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                               [&] {
                                 rt.allreduce("n", TensorView{nullptr, DataType::kFloat32, {3}},
                                              TensorView{nullptr, DataType::kFloat32, {3}}, {});
                               }),
                        "null pointer"));
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                               [&] { rt.allreduce("o", view_of(f), view_of(other), {}); }),
                        "must have the input's dtype and shape"));
    RANK_CHECK(contains(
        thrown(ErrorCode::kInvalidArgument, [&] { rt.allreduce("", view_of(f), view_of(f), {}); }),
        "name is empty"));
    std::vector<uint8_t> b(4, 1);
    TensorView bview{b.data(), DataType::kBool, {4}};
    RANK_CHECK(
        contains(thrown(ErrorCode::kInvalidArgument, [&] { rt.allreduce("b", bview, bview, {}); }),
                 "average is not defined for bool"));
    RANK_CHECK(contains(
        thrown(ErrorCode::kInvalidArgument,
               [&] { rt.allgather({"s"}, {TensorView{f.data(), DataType::kFloat32, {}}}, 0); }),
        "at least one dimension"));
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                               [&] {
                                 rt.allreduce("p", view_of(f), view_of(f),
                                              AllreduceOptions{ReduceOp::kSum, 1, 1, 5});
                               }),
                        "process set 5 does not exist"));
    // Scale factors that would make every element NaN or infinite (issue 36, point 8).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                               [&] {
                                 rt.allreduce("nan", view_of(f), view_of(f),
                                              AllreduceOptions{ReduceOp::kSum, nan, 1, 0});
                               }),
                        "prescale_factor=nan is not a finite number"));
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                               [&] {
                                 rt.allreduce("inf", view_of(f), view_of(f),
                                              AllreduceOptions{ReduceOp::kSum, 1, -inf, 0});
                               }),
                        "postscale_factor=-inf is not a finite number"));
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                               [&] {
                                 rt.reducescatter({"rs"}, {view_of(f)},
                                                  AllreduceOptions{ReduceOp::kSum, inf, 1, 0});
                               }),
                        "prescale_factor=inf is not a finite number"));

    // Duplicate name while the first op is in flight: only rank 0 enqueues twice; rank 1 joins
    // the first op after rank 0 saw the error, so the first op is certainly still pending.
    std::vector<float> x(4, 1.0f);
    if (rank == 0) {
      auto first = rt.allreduce("dup", view_of(x), view_of(x), {});
      RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                                 [&] { rt.allreduce("dup", view_of(x), view_of(x), {}); }),
                          "already in flight"));
      require_ok(*rt.broadcast("go", view_of(f), view_of(f), 0, 0));
      require_ok(*first);
    } else {
      require_ok(*rt.broadcast("go", view_of(f), view_of(f), 0, 0));
      require_ok(*rt.allreduce("dup", view_of(x), view_of(x), {}));
    }
  });
}

// The queue's in-flight set and the controller key pending tensors by views of each entry's own
// name (no copies, issue 12 point 6): a name must be refused exactly while its op is in flight,
// and be free again once the op completed or failed and its entry is gone, for short (inline)
// and long (heap) names alike, round after round.
TEST_CASE("names are in flight exactly until their op completes or fails", "[core][errors]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    const std::vector<std::string> names{"r", std::string(64, 'n') + ".a_long_gradient_name"};
    std::vector<float> f(4, 1.0f);
    const AllreduceOptions sum{ReduceOp::kSum, 1, 1, 0};
    for (int round = 0; round < 3; ++round) {
      for (const std::string& name : names) {
        std::vector<float> x(4, 1.0f);
        const std::string go = "go." + std::to_string(round) + "." + name;
        if (rank == 0) {  // rank 1 enqueues `name` only after the "go" broadcast: still pending
          auto first = rt.allreduce(name, view_of(x), view_of(x), sum);
          RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument,
                                     [&] { rt.allreduce(name, view_of(x), view_of(x), sum); }),
                              "already in flight"));
          require_ok(*rt.broadcast(go, view_of(f), view_of(f), 0, 0));
          require_ok(*first);
        } else {
          require_ok(*rt.broadcast(go, view_of(f), view_of(f), 0, 0));
          require_ok(*rt.allreduce(name, view_of(x), view_of(x), sum));
        }
        RANK_CHECK(x[0] == 2.0f);
        // A failed op (shapes differ across ranks) frees its name as a completed one does.
        std::vector<float> y(rank == 0 ? 4 : 5, 1.0f);
        require_error(*rt.allreduce(name, view_of(y), view_of(y), {}), ErrorCode::kMismatch);
        // Many names at once (one or two rounds), all reused on the next pass.
        std::vector<std::vector<float>> many(40, std::vector<float>(4, 1.0f));
        std::vector<std::shared_ptr<Handle>> handles;
        for (size_t i = 0; i < many.size(); ++i) {
          handles.push_back(
              rt.allreduce(name + "." + std::to_string(i), view_of(many[i]), view_of(many[i]), {}));
        }
        for (auto& handle : handles) require_ok(*handle);
      }
    }
  });
}

TEST_CASE("shutdown fails later ops with a clear error and is idempotent", "[core][errors]") {
  run_ranks(2, [](int, Runtime& rt) {
    std::vector<float> f(4, 1.0f);
    require_ok(*rt.allreduce("before", view_of(f), view_of(f), {}));
    rt.shutdown();
    rt.shutdown();
    RANK_CHECK(!rt.running());
    RANK_CHECK(contains(
        thrown(ErrorCode::kShutDown, [&] { rt.allreduce("after", view_of(f), view_of(f), {}); }),
        "shut down"));
  });
}

TEST_CASE("a rank shutting down fails the pending ops of the others", "[core][errors]") {
  run_ranks(2, [](int rank, Runtime& rt) {
    std::vector<float> f(4, 1.0f);
    if (rank == 1) {
      auto pending = rt.allreduce("never", view_of(f), view_of(f), {});
      std::string error = require_error(*pending, ErrorCode::kShutDown);
      // The op, its tensor, this rank, and the rank that shut down.
      RANK_CHECK(contains(error,
                          "allreduce of tensor 'never' on rank 1: runrun was shut down: "
                          "rank [0] of process set 0 called shutdown"));
      std::string later;
      try {
        rt.allreduce("after", view_of(f), view_of(f), {});
      } catch (const Error& e) {
        later = e.what();
      }
      RANK_CHECK(contains(later, "allreduce of tensor 'after' on rank 1: runrun was shut down"));
    } else {
      rt.shutdown();
    }
  });
}

TEST_CASE("a stall shuts the runtime down on the ranks that submitted, after the shutdown time",
          "[core][errors]") {
  // Rank 0 waits for 'only0', rank 1 for 'only1': neither is ever submitted by the other rank.
  // Whichever passes the shutdown time first shuts both ranks down: a rank's error names its
  // own tensor and the other rank, or the other rank's tensor and itself. Both submit right
  // after a barrier, and the peer monitor is off: with it, the waiting ranks' own view (tested
  // below) could fire first when one rank submits a second late.
  run_ranks(
      2,
      [](int rank, Runtime& rt) {
        std::vector<float> f(4, 1.0f);
        std::string name = rank == 0 ? "only0" : "only1";
        const std::string mine =
            "tensor '" + name + "' stalled: ranks [" + std::to_string(1 - rank) + "]";
        const std::string theirs = "tensor 'only" + std::to_string(1 - rank) +
                                   "' stalled: ranks [" + std::to_string(rank) + "]";
        require_ok(*rt.barrier(0));
        auto start = std::chrono::steady_clock::now();
        std::string error =
            require_error(*rt.allreduce(name, view_of(f), view_of(f), {}), ErrorCode::kTimeout);
        RANK_CHECK(contains(error, mine) || contains(error, theirs));
        // The coordinator pairs the two halves: what the missing rank submitted instead.
        RANK_CHECK(
            (contains(error, "Meanwhile ranks [" + std::to_string(1 - rank) + "] submitted 'only" +
                                 std::to_string(1 - rank) + "', which ranks [" +
                                 std::to_string(rank) + "] have not") ||
             contains(error, "Meanwhile ranks [" + std::to_string(rank) + "] submitted '" + name +
                                 "', which ranks [" + std::to_string(1 - rank) + "] have not")));
        RANK_CHECK(contains(error, "the two names differ only in their numbers"));
        RANK_CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
        // As in Horovod, a stall shutdown shuts the runtime down: later ops fail at once, naming
        // the stall, and the exit does not wait for the ranks that stalled.
        // (The worker may still be stopping: the op fails at enqueue or through its handle.)
        std::string later;
        try {
          later = require_error(*rt.allreduce("later", view_of(f), view_of(f), {}),
                                ErrorCode::kTimeout);
        } catch (const Error& e) {
          RANK_CHECK(e.code() == ErrorCode::kTimeout);
          later = e.what();
        }
        RANK_CHECK(contains(later, "runrun shut down after a stall: tensor '"));
        RANK_CHECK(!rt.running());
      },
      {{"RUNRUN_STALL_CHECK_TIME", "1"},
       {"RUNRUN_STALL_SHUTDOWN_TIME", "2"},
       {"RUNRUN_PEER_TIMEOUT", "0"}});
}

TEST_CASE("ranks waiting on different cached tensors reach the stall check and shut down",
          "[core][errors]") {
  // 'grads' and 'metric' are agreed three times, so both sit in the response cache; then rank 0
  // waits for 'grads' and rank 1 for 'metric'. Cache hits never go to the coordinator, whose
  // table the stall inspection reads: without moving a hit that waited past the stall time to
  // the coordinator, both ranks would wait for ever, unwarned.
  run_ranks(2,
            [](int rank, Runtime& rt) {
              std::vector<float> f(4, 1.0f);
              for (int step = 0; step < 3; ++step) {
                require_ok(*rt.allreduce("grads", view_of(f), view_of(f), {}));
                require_ok(*rt.allreduce("metric", view_of(f), view_of(f), {}));
              }
              RANK_CHECK(rt.worker(0).cache_hits() >= 4);  // the last two steps came from the cache
              require_ok(*rt.barrier(0));
              const std::string name = rank == 0 ? "grads" : "metric";
              const std::string other = rank == 0 ? "metric" : "grads";
              std::shared_ptr<Handle> handle = rt.allreduce(name, view_of(f), view_of(f), {});
              const bool done = handle->wait(std::chrono::seconds(30));
              RANK_CHECK(done);
              if (!done) {
                rt.shutdown();  // the test fails instead of hanging
                return;
              }
              RANK_CHECK(handle->code() == ErrorCode::kTimeout);
              const std::string error = handle->error();
              RANK_CHECK((contains(error, "tensor '" + name + "' stalled: ranks [" +
                                              std::to_string(1 - rank) + "]") ||
                          contains(error, "tensor '" + other + "' stalled: ranks [" +
                                              std::to_string(rank) + "]")));
            },
            {{"RUNRUN_STALL_CHECK_TIME", "1"},
             {"RUNRUN_STALL_SHUTDOWN_TIME", "2"},
             {"RUNRUN_PEER_TIMEOUT", "0"}});
}

TEST_CASE("a runtime failure under an op names the op, its tensor and the rank once",
          "[core][errors]") {
  CHECK(op_failure(OpType::kAllreduce, "w", 1, "runrun was shut down: rank [0] ...") ==
        "allreduce of tensor 'w' on rank 1: runrun was shut down: rank [0] ...");
  // A peer failure's reason names the rank that saw it already.
  CHECK(op_failure(OpType::kBroadcast, "b", 1, "runrun on rank 1: lost rank 0 (host h)") ==
        "broadcast of tensor 'b': runrun on rank 1: lost rank 0 (host h)");
}

TEST_CASE("alltoall split errors are immediate and name the problem", "[core][errors]") {
  run_ranks(2, [](int, Runtime& rt) {
    std::vector<float> f(6, 1.0f);
    TensorView v{f.data(), DataType::kFloat32, {3, 2}};
    RANK_CHECK(
        contains(thrown(ErrorCode::kInvalidArgument, [&] { rt.alltoall("a", v, {1, 1}, 0); }),
                 "add up to 2 but the first dimension is 3"));
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument, [&] { rt.alltoall("b", v, {3}, 0); }),
                        "got 1 splits for 2 ranks"));
    RANK_CHECK(
        contains(thrown(ErrorCode::kInvalidArgument, [&] { rt.alltoall("c", v, {4, -1}, 0); }),
                 "negative split"));
    RANK_CHECK(contains(thrown(ErrorCode::kInvalidArgument, [&] { rt.alltoall("d", v, {}, 0); }),
                        "does not divide by the 2 ranks"));
  });
}

TEST_CASE("a rank that enqueues nothing is named by the ranks waiting for it", "[core][errors]") {
  std::atomic<bool> released{false};
  run_ranks(2,
            [&](int rank, Runtime& rt) {
              // First a round of three together: the names a rank records before each round (reused
              // strings) must then shrink to the one it waits for.
              std::vector<std::vector<float>> warm(3, std::vector<float>(4, 1.0f));
              std::vector<std::shared_ptr<Handle>> handles;
              for (int i = 0; i < 3; ++i) {
                handles.push_back(rt.allreduce("warm." + std::to_string(i), view_of(warm[i]),
                                               view_of(warm[i]), {}));
              }
              for (auto& h : handles) require_ok(*h);
              if (rank == 1) {  // busy elsewhere: enqueues nothing until rank 0 gave up
                while (!released) std::this_thread::sleep_for(std::chrono::milliseconds(5));
                return;
              }
              struct Release {
                std::atomic<bool>& flag;
                ~Release() { flag = true; }
              } release{released};
              std::vector<float> f(4, 1.0f);
              std::string error = require_error(*rt.allreduce("lonely", view_of(f), view_of(f), {}),
                                                ErrorCode::kTimeout);
              RANK_CHECK(contains(error, "stall: tensors ['lonely']"));
              RANK_CHECK(!contains(error, "warm."));
              RANK_CHECK(contains(error, "ranks [1] have enqueued nothing"));
            },
            {{"RUNRUN_STALL_CHECK_TIME", "1"},
             {"RUNRUN_STALL_SHUTDOWN_TIME", "2"},
             {"RUNRUN_SHUTDOWN_TIMEOUT", "2"}});
}

TEST_CASE("the coordinator's stall warning is logged on every rank", "[core][errors]") {
  // Each rank's log also goes to a stream of the test's, added once the runtime started. Both
  // submit right after a barrier, and the peer monitor is off (as above): one rank late by a
  // second or two could otherwise be shut down before the other's tensor was warned about.
  std::ostringstream logs[2];
  run_ranks(2,
            [&](int rank, Runtime& rt) {
              rt.logger()->sinks().push_back(
                  std::make_shared<spdlog::sinks::ostream_sink_mt>(logs[rank]));
              std::vector<float> f(4, 1.0f);
              std::string name = rank == 0 ? "stall0" : "stall1";
              require_ok(*rt.barrier(0));
              require_error(*rt.allreduce(name, view_of(f), view_of(f), {}), ErrorCode::kTimeout);
            },
            {{"RUNRUN_STALL_CHECK_TIME", "1"},
             {"RUNRUN_STALL_SHUTDOWN_TIME", "3"},
             {"RUNRUN_PEER_TIMEOUT", "0"}});
  for (int rank : {0, 1}) {
    INFO("rank " << rank << " logged:\n" << logs[rank].str());
    // Each rank hears of the other's tensor, which it has not submitted itself.
    CHECK(contains(logs[rank].str(), "stall: tensor 'stall" + std::to_string(1 - rank) +
                                         "' was submitted by some ranks"));
    CHECK(contains(logs[rank].str(), "ranks [" + std::to_string(rank) + "] have not submitted"));
    CHECK(contains(logs[rank].str(), "Meanwhile ranks [" + std::to_string(rank) +
                                         "] submitted 'stall" + std::to_string(rank) + "'"));
    // It says when the job ends and how to change that (issue 36, point 1).
    CHECK(contains(logs[rank].str(), "The job ends in "));
    CHECK(contains(logs[rank].str(), " s unless the ranks catch up: these ops then fail"));
    CHECK(contains(logs[rank].str(), "RUNRUN_STALL_SHUTDOWN_TIME=3 s; raise it"));
  }
}
