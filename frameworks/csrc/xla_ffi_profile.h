#pragma once
// Why: runrun --profile inside jax.jit without a host callback per step (docs/profiling.md).
// The XLA FFI handlers (xla_ffi_handler.cc) record the profiled moments of a jitted step here,
// with no Python and no GIL: the gradient allreduce's start and end, and the step end (the
// "runrun_profile_mark" custom call after the update). Python (runrun.jax.profile_marks) takes
// the records in batches, lazily: when a table is due, every few hundred steps, at a
// profile_step() and at shutdown; a Python thread waits in profile_wait() (GIL released) for the
// moment a batch is due.
// Each record carries the id of the profiler whose program asked for it (a StepProfiler traced
// the step), so the records reach the profiler they belong to.
// Threading: record from any thread (XLA's); take/wait/wake from any thread; one mutex.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace runrun::python {

// CLOCK_MONOTONIC seconds: time.perf_counter's clock on Linux, the profiler's default clock.
double profile_clock();

// A profiled grouped allreduce ran from `start` to `end` over `bytes` of gradients.
void profile_record_allreduce(int32_t profiler, double start, double end, size_t bytes);

// The step of `profiler` ended now (its update is computed).
void profile_record_step_end(int32_t profiler);

struct ProfileRecord {
  int32_t profiler;
  int32_t kind;       // 0: a grouped allreduce, 1: a step end
  double start, end;  // a step end: start == end
  size_t bytes;
};

// The records since the last take, in order, and how many were dropped (a full ring).
struct ProfileBatch {
  std::vector<ProfileRecord> records;
  size_t dropped = 0;
};
ProfileBatch profile_take();

// Blocks (the caller released the GIL) until a batch is due, profile_wake() or `timeout_s`;
// true unless it timed out.
bool profile_wait(double timeout_s);
void profile_wake();
// How many step ends make a batch that ends a wait.
void profile_set_batch(size_t steps);

}  // namespace runrun::python
