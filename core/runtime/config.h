#pragma once
// Why: the runtime's knobs as typed values. Each is declared once in common/knobs.h; this
// reads them from the RUNRUN_* environment, lets a caller (tests, bindings) override any of them
// by name, and rejects malformed values with a message naming the variable.
// Thread-safety: a Config is a plain value, read-only once a runtime holds it.

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace runrun {

struct Config {
  std::string log_level = "warn";
  std::string backend = "auto";
  std::chrono::microseconds cycle_time{1000};
  std::chrono::microseconds burst_gap{50};  // TensorQueue::settle
  size_t fusion_threshold = 4 << 20;
  size_t cache_capacity = 1024;
  std::string timeline_path;
  bool timeline_mark_cycles = false;  // CYCLE_START marks (RUNRUN_TIMELINE_MARK_CYCLES)
  std::chrono::seconds stall_check_time{60};
  std::chrono::seconds stall_shutdown_time{0};
  std::chrono::seconds shutdown_timeout{30};
  std::chrono::milliseconds collective_timeout{0};
  std::chrono::milliseconds peer_timeout{30000};
  // RUNRUN_JOIN_AVERAGE=contributors: an average divides by the ranks that contributed instead
  // of the set size while ranks have joined.
  bool join_average_by_contributors = false;
  // RUNRUN_HIERARCHICAL_ALLREDUCE=1: the global set's CPU allreduce goes host by host
  // (ops/hierarchical/hierarchical_backend.h).
  bool hierarchical_allreduce = false;
  // RUNRUN_GPU_OPERATIONS: auto, nccl or staging (core/execution/device_collectives.h).
  std::string gpu_operations = "auto";
  // RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS: nccl or staging, the stage across hosts of the
  // hierarchical allreduce of CUDA tensors (core/execution/device_collectives.h).
  std::string hierarchical_allreduce_cross = "nccl";
  // RUNRUN_AUTOTUNE*: the online search of the global set's tunables (core/autotune/autotuner.h).
  struct Autotune {
    bool enabled = false;
    std::string log_path;
    int warmup_samples = 3;
    int steps_per_sample = 10;
    int samples_per_candidate = 3;
    double margin = 0.05;
  } autotune;
  // RUNRUN_PROFILE (anything but empty or 0, as runrun.common.profile reads it): the global set
  // records each rank's lateness in negotiation (core/negotiation/rank_lateness.h).
  bool profile = false;
  // RUNRUN_THREAD_AFFINITY: CPU ids, one per local rank (core/runtime/thread_placement.h); empty:
  // none.
  std::vector<int> thread_affinity;

  // Defaults, overridden by the environment, overridden by `overrides` (knob env name -> value).
  // Throws InvalidArgumentError for an unknown override name or a malformed value.
  static Config load(const std::map<std::string, std::string>& overrides = {});
};

}  // namespace runrun
