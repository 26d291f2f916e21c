#pragma once
// Why: one row per measurement, written either as one JSON object per line (--json, for scripts
// and docs/perf-notes/) or as aligned tables for people. Only rank 0 writes.
// Bandwidth follows the nccl-tests conventions: algbw = bytes / time, busbw = algbw * factor
// with factor 2(n-1)/n for allreduce, (n-1)/n for allgather, reducescatter and alltoall, 1 for
// broadcast; `bytes` is the buffer size for allreduce/broadcast/alltoall, the whole gathered
// output for allgather and the whole input for reducescatter.
// Thread-safety: one thread (the benchmark's main thread).

#include <cstddef>
#include <optional>
#include <string>

#include "tests/perf/bench_timing.h"

namespace runrun::perf {

struct Row {
  std::string op;  // e.g. "allreduce", "allreduce.many", "allgather"
  size_t bytes = 0;
  size_t tensors = 1;
  double bus_factor = 1;
  Summary runtime;
  Summary raw;
  std::optional<Summary> raw_one_call;   // many-tensor cases: one raw call over all the bytes
  std::optional<double> fused_per_step;  // many-tensor cases: fused collectives per runtime step
};

// What a block of rows was measured under (printed once per runtime).
struct RunInfo {
  int ranks = 0;
  size_t fusion_threshold = 0;
  long cycle_time_us = 0;
  std::string yield_when_idle;  // OMPI_MCA_mpi_yield_when_idle, or "unset"
  std::string backend;
  std::string raw;                          // the raw side: "mpi" or "gloo" (bench_raw.h)
  std::string libnbc_iallreduce_algorithm;  // OMPI_MCA_coll_libnbc_iallreduce_algorithm
  long peer_timeout_ms = 0;                 // RUNRUN_PEER_TIMEOUT; 0: no peer monitor
  bool timeline = false;                    // RUNRUN_TIMELINE set
};

double bus_factor_for(const std::string& op, int ranks);

class Reporter {
 public:
  Reporter(bool json, bool active) : json_(json), active_(active) {}

  void run_info(const RunInfo& info);
  void row(const Row& row);

 private:
  void table_header(const Row& row);

  bool json_;
  bool active_;
  RunInfo info_;
  std::string last_op_;
};

}  // namespace runrun::perf
