#pragma once
// Why: the XLA FFI handlers of runrun.jax's native jit path (xla_ffi.h), free of Python so
// that tests/unit/gpu/xla_ffi_procs.cc drives them with hand-built call frames (no GPU, no
// jaxlib at run time).
// runrun_collective on the CPU platform reads and writes host buffers; on the CUDA platform it
// hands XLA's device buffers to the C API as kDLCUDA tensors on XLA's stream (docs/gpu.md,
// "Inside jax.jit"). runrun_profile_mark ends a step profiled by runrun --profile.
// Threading: XLA calls them on its threads, one op per call; see xla_ffi_handler.cc.

#include <xla/ffi/api/c_api.h>

#include <cstdint>

namespace runrun::python {

XLA_FFI_Error* xla_ffi_collective_cpu(XLA_FFI_CallFrame* frame);
XLA_FFI_Error* xla_ffi_collective_cuda(XLA_FFI_CallFrame* frame);
XLA_FFI_Error* xla_ffi_profile_mark(XLA_FFI_CallFrame* frame);

// Restarts the counters that name unnamed jit ops, of process set `set` (all sets when < 0).
void xla_ffi_forget_names(int32_t set);

}  // namespace runrun::python
