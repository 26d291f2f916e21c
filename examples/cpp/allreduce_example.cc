// runrun_example_allreduce: the smallest complete use of runrun from C++, through the public C
// API (runrun/c_api.h) only — the same surface every language binding uses.
//
//   mpirun -np 4 --oversubscribe --bind-to none runrun_example_allreduce
//   (or: runrun -np 4 runrun_example_allreduce)
//
// Every rank starts a runtime, contributes the tensor (rank + 1) * [1, 2, ..., 8], sums it
// across all ranks with one asynchronous allreduce (tensors cross the API as DLPack DLTensors),
// prints its result on one line, checks it against the sum computed locally and shuts down.
// Exit status: 0 when this rank's result is right, 1 otherwise.
#include <dlpack/dlpack.h>
#include <runrun/c_api.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

namespace {

constexpr int kElements = 8;

// Prints the failed call and runrun's message (what was wrong, where, what to do).
bool ok(runrun_status status, const char* call) {
  if (status == RUNRUN_OK) return true;
  std::fprintf(stderr, "%s failed (status %d): %s\n", call, static_cast<int>(status),
               runrun_last_error());
  return false;
}

// A DLPack view of a contiguous float32 CPU vector; the caller keeps `data` alive.
DLTensor as_dlpack(float* data, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = nullptr;  // contiguous
  t.byte_offset = 0;
  return t;
}

std::string format(const std::array<float, kElements>& values) {
  std::string text = "[";
  for (int i = 0; i < kElements; ++i) {
    text += (i ? ", " : "") + std::to_string(static_cast<int>(values[static_cast<size_t>(i)]));
  }
  return text + "]";
}

// Sums `values` across ranks in place; true when the op completed.
bool allreduce_sum(runrun_runtime* rt, std::array<float, kElements>& values) {
  int64_t shape[1] = {kElements};
  DLTensor tensor = as_dlpack(values.data(), shape);
  runrun_allreduce_options options = runrun_allreduce_default_options();
  options.op = RUNRUN_OP_SUM;
  runrun_handle* handle = nullptr;
  if (!ok(runrun_allreduce(rt, "example.gradient", &tensor, &tensor, &options, &handle),
          "runrun_allreduce")) {
    return false;
  }
  const runrun_status status = runrun_handle_wait(handle, 60.0);
  if (status != RUNRUN_OK) {
    std::fprintf(stderr, "allreduce did not complete (status %d): %s\n", static_cast<int>(status),
                 runrun_handle_error(handle));
  }
  runrun_handle_release(handle);
  return status == RUNRUN_OK;
}

// Rank r prints on its turn (a barrier between turns), so the lines come out in rank order.
bool print_in_rank_order(runrun_runtime* rt, const runrun_topology& topo, const std::string& line) {
  for (int turn = 0; turn < topo.size; ++turn) {
    if (turn == topo.rank) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
    runrun_handle* barrier = nullptr;
    if (!ok(runrun_barrier(rt, 0, &barrier), "runrun_barrier")) return false;
    const runrun_status status = runrun_handle_wait(barrier, 60.0);
    runrun_handle_release(barrier);
    if (!ok(status, "waiting for runrun_barrier")) return false;
  }
  return true;
}

int run(runrun_runtime* rt) {
  runrun_topology topo{};
  if (!ok(runrun_get_topology(rt, &topo), "runrun_get_topology")) return 1;
  std::array<float, kElements> values{};
  std::array<float, kElements> expected{};
  const int rank_sum = topo.size * (topo.size + 1) / 2;  // sum of (r + 1) over all ranks
  for (int i = 0; i < kElements; ++i) {
    values[static_cast<size_t>(i)] = static_cast<float>((topo.rank + 1) * (i + 1));
    expected[static_cast<size_t>(i)] = static_cast<float>(rank_sum * (i + 1));
  }
  if (!allreduce_sum(rt, values)) return 1;
  const bool right = values == expected;
  const std::string line = "rank " + std::to_string(topo.rank) + "/" + std::to_string(topo.size) +
                           " (backend " + runrun_backend_name(rt) +
                           "): allreduce sum = " + format(values) +
                           (right ? "  OK" : "  WRONG, expected " + format(expected));
  if (!print_in_rank_order(rt, topo, line)) return 1;
  return right ? 0 : 1;
}

}  // namespace

int main() {
  runrun_runtime* rt = nullptr;
  if (!ok(runrun_init(nullptr, &rt), "runrun_init")) return 1;  // RUNRUN_BACKEND or auto
  const int code = run(rt);
  const bool stopped = ok(runrun_shutdown(rt), "runrun_shutdown");
  runrun_destroy(rt);
  return stopped ? code : 1;
}
