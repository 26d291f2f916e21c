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
// Threading: record from any thread (XLA's); take/wait/notify from any thread; one mutex.

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>

namespace runrun::python {

// CLOCK_MONOTONIC seconds: time.perf_counter's clock on Linux, the profiler's default clock.
double profile_clock();

// A profiled grouped allreduce ran from `start` to `end` over `bytes` of gradients.
void profile_record_allreduce(int32_t profiler, double start, double end, size_t bytes);

// The step of `profiler` ended now (its update is computed).
void profile_record_step_end(int32_t profiler);

// Adds _core.xla_ffi_profile_take/_wait/_wake/_set_batch and _core.xla_ffi_clock.
void bind_xla_ffi_profile(pybind11::module_& m);

}  // namespace runrun::python
