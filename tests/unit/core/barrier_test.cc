// Issue 9, point 4: barrier() is a synchronization point, not a drain. It completes once every
// rank of the set called it, whatever other ops are still pending — as in Horovod, where a
// pending allreduce whose peers have not submitted it yet does not block the barrier.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using runrun::testing::require_ok;
using runrun::testing::run_ranks;
using runrun::testing::view_of;

namespace {

// Enqueues the op under test, named "d", on `values`; its output (if the runtime allocates one)
// stays in the handle.
using EnqueueOp = std::function<std::shared_ptr<Handle>(Runtime&, std::vector<float>&)>;

// Rank 0: op('d') async, then barrier; rank 1: barrier, then op('d'). The barrier must complete
// on both ranks while 'd' is pending on rank 0 only; then 'd' completes too.
// Run twice: rank 0 first (its worker waits in a round with 'd' when rank 1 arrives), and rank 1
// first (its barrier waits in a round when rank 0 brings 'd', then its own barrier).
void check_barrier_passes_pending(const EnqueueOp& enqueue) {
  for (bool rank0_first : {true, false}) {
    run_ranks(2, [&](int rank, Runtime& rt) {
      using namespace std::chrono_literals;
      std::vector<float> values(6, static_cast<float>(rank + 1));
      std::shared_ptr<Handle> op;
      if (rank == 0) {
        if (!rank0_first) std::this_thread::sleep_for(100ms);
        op = enqueue(rt, values);
        std::this_thread::sleep_for(50ms);
      }
      auto barrier = rt.barrier(0);
      RANK_CHECK(barrier->wait(std::chrono::seconds(20)));  // a drain would wait forever
      require_ok(*barrier);
      if (rank == 1) op = enqueue(rt, values);
      require_ok(*op);
    });
  }
}

}  // namespace

TEST_CASE("barrier completes while an allreduce is pending on one rank", "[core][barrier]") {
  check_barrier_passes_pending([](Runtime& rt, std::vector<float>& v) {
    AllreduceOptions sum;
    sum.op = ReduceOp::kSum;
    return rt.allreduce("d", view_of(v), view_of(v), sum);
  });
}

TEST_CASE("barrier completes while an allgather is pending on one rank", "[core][barrier]") {
  check_barrier_passes_pending(
      [](Runtime& rt, std::vector<float>& v) { return rt.allgather({"d"}, {view_of(v)}, 0); });
}

TEST_CASE("barrier completes while a broadcast is pending on one rank", "[core][barrier]") {
  check_barrier_passes_pending([](Runtime& rt, std::vector<float>& v) {
    return rt.broadcast("d", view_of(v), view_of(v), 0, 0);
  });
}

TEST_CASE("barrier completes while a reducescatter is pending on one rank", "[core][barrier]") {
  check_barrier_passes_pending([](Runtime& rt, std::vector<float>& v) {
    AllreduceOptions sum;
    sum.op = ReduceOp::kSum;
    return rt.reducescatter({"d"}, {view_of(v)}, sum);
  });
}
