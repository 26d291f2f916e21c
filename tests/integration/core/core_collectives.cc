// The runtime over a real process backend, run with 2 and 4 processes: under mpiexec (MPI) and
// under `runrun --gloo` (Gloo). Every op x dtype x in place/out of place x odd sizes, process
// sets, join, and many tensors enqueued concurrently in a different order on every rank. Every
// result is compared exactly with a locally computed reference. Exits non-zero naming rank, op,
// dtype, size and element on the first difference.
// Usage: core_collectives BACKEND — the backend comes from the environment as in a real job
// (RUNRUN_BACKEND, default auto: Gloo under `runrun --gloo`, else MPI); BACKEND is the one the
// job must have ended up with, so a launcher that silently picked another one fails the test.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/runtime/runtime.h"
#include "ops/backend_factory.h"
#include "tests/support/backend_conformance_values.h"

namespace runrun {
namespace {

using conformance::input_value;
using conformance::load;
using conformance::make_buffer;

constexpr size_t kSizes[] = {0, 1, 7, (1u << 20) + 3};
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax,
                             ReduceOp::kProduct};

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Checker {
 public:
  explicit Checker(Runtime& rt) : rt_(rt), rank_(rt.topology().rank), size_(rt.topology().size) {}

  void wait_ok(Handle& h, const std::string& what) {
    if (!h.wait(std::chrono::seconds(120))) fail(what + ": did not complete in 120 s");
    if (h.code() != ErrorCode::kOk) fail(what + ": failed: " + h.error());
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw Failure("rank " + std::to_string(rank_) + ": " + message);
  }

  void expect(DataType type, const void* got, size_t count, const std::string& what,
              const std::function<double(size_t)>& expected) {
    for (size_t i = 0; i < count; ++i) {
      double g = load(type, got, i);
      double e = expected(i);
      if (g != e) {
        fail(what + " (" + std::string(data_type_name(type)) + ", " + std::to_string(count) +
             " elements): element " + std::to_string(i) + " is " + std::to_string(g) +
             ", expected " + std::to_string(e));
      }
    }
    ++checks_;
  }

  // Reference of `op` over every rank's input at index i.
  double reference(DataType type, ReduceOp op, size_t i) const {
    ReduceOp base = op == ReduceOp::kAverage ? ReduceOp::kSum : op;
    int64_t acc = input_value(0, i, type, base);
    for (int r = 1; r < size_; ++r)
      acc = conformance::combine(acc, input_value(r, i, type, base), type, base);
    if (op != ReduceOp::kAverage) return static_cast<double>(acc);
    if (is_floating_point(type)) return static_cast<double>(acc) / size_;
    // integers: the sum times 1 / size in double, truncated (Horovod's postscale).
    return std::trunc(static_cast<double>(acc) * (1.0 / size_));
  }

  void allreduce_matrix() {
    for (DataType type : conformance::kAllTypes) {
      for (ReduceOp op : kOps) {
        if (type == DataType::kBool && op == ReduceOp::kAverage) continue;
        for (size_t n : kSizes) {
          for (bool in_place : {true, false}) {
            ReduceOp base = op == ReduceOp::kAverage ? ReduceOp::kSum : op;
            auto in =
                make_buffer(type, n, [&](size_t i) { return input_value(rank_, i, type, base); });
            auto out = make_buffer(type, n, [](size_t) { return 0; });
            std::vector<int64_t> shape{static_cast<int64_t>(n)};
            TensorView vin{in.data(), type, shape};
            TensorView vout{in_place ? in.data() : out.data(), type, shape};
            AllreduceOptions options;
            options.op = op;
            std::string what = "allreduce " + std::string(reduce_op_name(op)) +
                               (in_place ? " in place" : " out of place");
            std::string name =
                what + "." + std::string(data_type_name(type)) + "." + std::to_string(n);
            auto h = rt_.allreduce(name, vin, vout, options);
            wait_ok(*h, what);
            expect(type, vout.data, n, what, [&](size_t i) { return reference(type, op, i); });
          }
        }
      }
    }
  }

  void allgather_broadcast_matrix() {
    for (DataType type : conformance::kAllTypes) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{(1u << 20) + 3}}) {
        // allgather: rank r contributes (r + 1) * n / size rows of 3 elements (0 rows allowed).
        int64_t rows = static_cast<int64_t>((static_cast<size_t>(rank_) + 1) * n /
                                            static_cast<size_t>(size_ * 3));
        auto in = make_buffer(type, static_cast<size_t>(rows) * 3, [&](size_t i) {
          return input_value(rank_, i, type, ReduceOp::kSum);
        });
        std::string what =
            "allgather " + std::string(data_type_name(type)) + " " + std::to_string(n);
        auto h = rt_.allgather({what}, {TensorView{in.data(), type, {rows, 3}}}, 0);
        wait_ok(*h, what);
        auto out = h->take_output(0);
        if (!out) fail(what + ": no output");
        std::vector<std::pair<int, size_t>> origin;  // element -> (rank, index in that rank)
        for (int r = 0; r < size_; ++r) {
          size_t rr = (static_cast<size_t>(r) + 1) * n / static_cast<size_t>(size_ * 3);
          for (size_t i = 0; i < rr * 3; ++i) origin.emplace_back(r, i);
        }
        if (out->shape[0] != static_cast<int64_t>(origin.size() / 3))
          fail(what + ": wrong row count");
        expect(type, out->storage.get(), origin.size(), what, [&](size_t i) {
          return static_cast<double>(
              input_value(origin[i].first, origin[i].second, type, ReduceOp::kSum));
        });

        for (int root = 0; root < size_; ++root) {
          for (bool in_place : {true, false}) {
            auto src = make_buffer(
                type, n, [&](size_t i) { return input_value(rank_, i, type, ReduceOp::kSum); });
            auto dst = make_buffer(type, n, [](size_t) { return 0; });
            std::vector<int64_t> shape{static_cast<int64_t>(n)};
            void* target = in_place ? src.data() : dst.data();
            std::string bwhat = "broadcast root " + std::to_string(root) +
                                (in_place ? " in place " : " ") +
                                std::string(data_type_name(type)) + " " + std::to_string(n);
            auto b = rt_.broadcast(bwhat, TensorView{src.data(), type, shape},
                                   TensorView{target, type, shape}, root, 0);
            wait_ok(*b, bwhat);
            expect(type, target, n, bwhat, [&](size_t i) {
              return static_cast<double>(input_value(root, i, type, ReduceOp::kSum));
            });
          }
        }
      }
    }
  }

  void alltoall_reducescatter() {
    for (DataType type :
         {DataType::kFloat32, DataType::kInt64, DataType::kBFloat16, DataType::kUInt8}) {
      // alltoall: rank r sends (r + p) % 3 rows of 2 elements to rank p.
      std::vector<int64_t> splits;
      for (int p = 0; p < size_; ++p) splits.push_back((rank_ + p) % 3);
      int64_t rows = std::accumulate(splits.begin(), splits.end(), int64_t{0});
      auto in = make_buffer(type, static_cast<size_t>(rows) * 2,
                            [&](size_t i) { return input_value(rank_, i, type, ReduceOp::kSum); });
      std::string what = "alltoall " + std::string(data_type_name(type));
      auto h = rt_.alltoall(what, TensorView{in.data(), type, {rows, 2}}, splits, 0);
      wait_ok(*h, what);
      auto out = h->take_output(0);
      std::vector<double> expected;
      for (int p = 0; p < size_; ++p) {
        int64_t offset = 0;
        for (int q = 0; q < rank_; ++q) offset += (p + q) % 3;
        for (int64_t i = 0; i < ((p + rank_) % 3) * 2; ++i) {
          expected.push_back(static_cast<double>(
              input_value(p, static_cast<size_t>(offset * 2 + i), type, ReduceOp::kSum)));
        }
      }
      expect(type, out->storage.get(), expected.size(), what,
             [&](size_t i) { return expected[i]; });

      // reducescatter of 2 * size + 1 rows of 3: the first rank gets one extra row.
      const int64_t total_rows = 2 * size_ + 1;
      auto rin = make_buffer(type, static_cast<size_t>(total_rows) * 3,
                             [&](size_t i) { return input_value(rank_, i, type, ReduceOp::kSum); });
      AllreduceOptions options;
      options.op = ReduceOp::kSum;
      std::string rwhat = "reducescatter " + std::string(data_type_name(type));
      auto r = rt_.reducescatter({rwhat}, {TensorView{rin.data(), type, {total_rows, 3}}}, options);
      wait_ok(*r, rwhat);
      auto rout = r->take_output(0);
      int64_t my_rows = 2 + (rank_ == 0 ? 1 : 0);
      int64_t first_row = rank_ == 0 ? 0 : 3 + 2 * (rank_ - 1);
      if (rout->shape[0] != my_rows) fail(rwhat + ": wrong row count");
      expect(type, rout->storage.get(), static_cast<size_t>(my_rows) * 3, rwhat, [&](size_t i) {
        return reference(type, ReduceOp::kSum, static_cast<size_t>(first_row * 3) + i);
      });
    }
  }

  // 300 tensors of mixed sizes, dtypes and ops, enqueued in a different order on every rank.
  void concurrent_shuffled() {
    const int count = 300;
    std::vector<int> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(rank_) * 31 + 1));
    std::vector<std::vector<char>> buffers(count);
    std::vector<std::shared_ptr<Handle>> handles(count);
    auto type_of = [](int t) { return conformance::kAllTypes[t % 9]; };  // no bool (the last)
    auto size_of = [](int t) { return static_cast<size_t>((t * 37) % 5000); };
    for (int t : order) {
      DataType type = type_of(t);
      size_t n = size_of(t);
      auto& buf = buffers[static_cast<size_t>(t)];
      buf = make_buffer(type, n,
                        [&](size_t i) { return input_value(rank_, i, type, ReduceOp::kSum); });
      TensorView v{buf.data(), type, {static_cast<int64_t>(n)}};
      std::string name = "concurrent." + std::to_string(t);
      if (t % 3 == 2) {
        handles[static_cast<size_t>(t)] = rt_.broadcast(name, v, v, t % size_, 0);
      } else {
        AllreduceOptions options;
        options.op = ReduceOp::kSum;
        handles[static_cast<size_t>(t)] = rt_.allreduce(name, v, v, options);
      }
    }
    for (int t = 0; t < count; ++t) {
      DataType type = type_of(t);
      wait_ok(*handles[static_cast<size_t>(t)], "concurrent " + std::to_string(t));
      expect(type, buffers[static_cast<size_t>(t)].data(), size_of(t),
             "concurrent " + std::to_string(t), [&](size_t i) {
               if (t % 3 == 2)
                 return static_cast<double>(input_value(t % size_, i, type, ReduceOp::kSum));
               return reference(type, ReduceOp::kSum, i);
             });
    }
  }

  // Process sets (the backend's subgroups), and join with uneven steps per rank.
  void process_sets_and_join() {
    std::vector<int> even, odd;
    for (int r = 0; r < size_; ++r) (r % 2 ? odd : even).push_back(r);
    int32_t even_id = rt_.add_process_set(even);
    int32_t odd_id = rt_.add_process_set(odd);
    int32_t mine = rank_ % 2 ? odd_id : even_id;
    const std::vector<int>& members = rank_ % 2 ? odd : even;
    for (int step = 0; step < 3; ++step) {
      std::vector<float> x(1000, static_cast<float>(rank_ + step));
      AllreduceOptions options;
      options.op = ReduceOp::kSum;
      options.process_set = mine;
      auto h = rt_.allreduce("set.x" + std::to_string(step),
                             TensorView{x.data(), DataType::kFloat32, {1000}},
                             TensorView{x.data(), DataType::kFloat32, {1000}}, options);
      wait_ok(*h, "process set allreduce");
      float expected = 0;
      for (int m : members) expected += static_cast<float>(m + step);
      expect(DataType::kFloat32, x.data(), x.size(), "process set allreduce",
             [&](size_t) { return expected; });
    }
    rt_.remove_process_set(even_id);
    rt_.remove_process_set(odd_id);

    // Rank r trains r + 1 steps, then joins; joined ranks add zeros and the average divides by
    // the set size (RUNRUN_JOIN_AVERAGE's default, as Horovod).
    for (int step = 0; step < size_; ++step) {
      if (step > rank_) break;
      std::vector<double> g(257, static_cast<double>(rank_ + 1));
      AllreduceOptions options;
      options.op = ReduceOp::kAverage;
      auto h = rt_.allreduce("join.grad" + std::to_string(step),
                             TensorView{g.data(), DataType::kFloat64, {257}},
                             TensorView{g.data(), DataType::kFloat64, {257}}, options);
      wait_ok(*h, "allreduce with joined ranks");
      double sum = 0;
      for (int r = step; r < size_; ++r) sum += r + 1;
      expect(DataType::kFloat64, g.data(), g.size(), "allreduce with joined ranks",
             [&](size_t) { return sum / size_; });
    }
    auto joined = rt_.join(0);
    wait_ok(*joined, "join");
    if (joined->result() != size_ - 1)
      fail("join returned " + std::to_string(joined->result()) + ", expected the last rank");
    ++checks_;
  }

  size_t checks() const { return checks_; }

 private:
  Runtime& rt_;
  int rank_;
  int size_;
  size_t checks_ = 0;
};

}  // namespace
}  // namespace runrun

int main(int argc, char** argv) {
  using namespace runrun;
  if (argc != 2) {
    std::fprintf(stderr, "usage: core_collectives EXPECTED_BACKEND (mpi or gloo)\n");
    return 2;
  }
  try {
    const Config config = Config::load();
    BackendOptions backend;
    backend.name = config.backend;
    backend.collective_timeout = config.collective_timeout;
    Runtime rt(make_backend(backend), config);
    if (rt.backend_name() != argv[1]) {
      std::fprintf(stderr, "FAILED: rank %d runs the %s backend, expected %s\n", rt.topology().rank,
                   std::string(rt.backend_name()).c_str(), argv[1]);
      return 1;
    }
    Checker checker(rt);
    checker.allreduce_matrix();
    checker.allgather_broadcast_matrix();
    checker.alltoall_reducescatter();
    checker.concurrent_shuffled();
    checker.process_sets_and_join();
    std::printf("rank %d/%d: %zu checks passed over %s\n", rt.topology().rank, rt.topology().size,
                checker.checks(), argv[1]);
    rt.shutdown();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    return 1;
  }
}
