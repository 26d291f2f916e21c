#pragma once
// Why: what one benchmark run measures and how it reports, parsed once from the command line
// (identically on every rank, so every rank runs the same sequence of collectives).
// Thread-safety: a plain value.

#include <cstddef>
#include <string>
#include <vector>

namespace runrun::perf {

struct BenchOptions {
  bool json = false;                      // one JSON object per line instead of tables
  std::vector<size_t> sizes;              // bytes per op; empty: each op's default range
  int iters = 20;                         // timed blocks per side (fewer when the budget runs out)
  int warmup = 3;                         // untimed blocks per side before timing
  double budget_s = 2.0;                  // time per (op, size) after which timing stops early
  bool shared_clock = false;              // --shared-clock: bench_timing.h's TimingPlan
  std::vector<std::string> cases;         // which cases run (kAllCases when empty)
  std::vector<size_t> fusion_thresholds;  // one runtime per value; empty: RUNRUN_* / default
  size_t many_count = 100;                // the many-tensors case: this many tensors ...
  size_t many_bytes = 1024;               // ... of this many bytes each
};

inline const std::vector<std::string> kAllCases = {"allreduce", "many",          "resnet50",
                                                   "allgather", "reducescatter", "alltoall",
                                                   "broadcast", "adasum"};
// CUDA buffers, runtime vs raw NCCL (bench_gpu.h): only when named in --cases (they need a GPU).
inline const std::vector<std::string> kGpuCases = {"cuda_allreduce", "cuda_broadcast",
                                                   "cuda_allgather"};

// Parses the command line. Returns -1 to go on, or the exit code (0 after --help, 2 after a
// usage error); only when `print` is set does it write help and errors (rank 0).
int parse_options(int argc, char** argv, bool print, BenchOptions& out);

// "4", "1K", "64M", "1G" (powers of 1024) -> bytes. Throws InvalidArgumentError naming `text`.
size_t parse_bytes(const std::string& text);

}  // namespace runrun::perf
